package io.continuum.broker.app.runtime;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * The service manager's end of sd_notify(3), as systemd binds it for a {@code Type=notify} unit: an
 * {@code AF_UNIX} datagram socket at a path, read one datagram at a time. A test peer (the JDK has no Unix
 * datagram sockets, so libc through the foreign-function API, as {@link SystemdNotify} does).
 */
public final class NotifySocket implements AutoCloseable {
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVTIMEO = 20;
    private static final MethodHandle SOCKET;
    private static final MethodHandle BIND;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle RECV;
    private static final MethodHandle CLOSE;

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        SOCKET = linker.downcallHandle(libc.find("socket").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        BIND = linker.downcallHandle(libc.find("bind").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        SETSOCKOPT = linker.downcallHandle(libc.find("setsockopt").orElseThrow(), FunctionDescriptor.of(
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        RECV = linker.downcallHandle(libc.find("recv").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT));
    }

    private final Path path;
    private final int fd;

    private NotifySocket(Path path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /**
     * Binds the socket at {@code path} (which must not exist, and be shorter than 108 bytes).
     *
     * @param path where
     * @return the bound socket
     */
    public static NotifySocket bind(Path path) {
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) SOCKET.invokeExact(AF_UNIX, SOCK_DGRAM, 0);
            if (fd < 0) {
                throw new IllegalStateException("socket failed");
            }
            byte[] name = path.toString().getBytes(StandardCharsets.UTF_8);
            MemorySegment addr = arena.allocate(110);
            addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
            MemorySegment.copy(name, 0, addr, ValueLayout.JAVA_BYTE, 2, name.length);
            if ((int) BIND.invokeExact(fd, addr, 2 + name.length + 1) != 0) {
                int closed = (int) CLOSE.invokeExact(fd);
                throw new IllegalStateException("bind " + path + " failed (" + closed + ")");
            }
            return new NotifySocket(path, fd);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return what {@code $NOTIFY_SOCKET} names */
    public String address() {
        return path.toString();
    }

    /**
     * The next datagram.
     *
     * @param timeout longest wait
     * @return its text, empty when none came in time
     */
    public Optional<String> receive(Duration timeout) {
        if (!Thread.currentThread().isVirtual()) {
            return receiveHere(timeout);
        }
        // recv(2) through a downcall pins a virtual thread's carrier for the whole wait: with one core (one
        // carrier) the broker under test could not run meanwhile and so could never send what is awaited.
        FutureTask<Optional<String>> task = new FutureTask<>(() -> receiveHere(timeout));
        Thread.ofPlatform().name("notify-socket-receive").daemon().start(task);
        try {
            return task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while receiving", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    private Optional<String> receiveHere(Duration timeout) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tv = arena.allocate(16); // struct timeval { long tv_sec; long tv_usec; }
            tv.set(ValueLayout.JAVA_LONG, 0, timeout.toSeconds());
            tv.set(ValueLayout.JAVA_LONG, 8, timeout.toMillisPart() * 1000L);
            if ((int) SETSOCKOPT.invokeExact(fd, SOL_SOCKET, SO_RCVTIMEO, tv, 16) != 0) {
                throw new IllegalStateException("setsockopt SO_RCVTIMEO failed");
            }
            MemorySegment buf = arena.allocate(4096);
            long n = (long) RECV.invokeExact(fd, buf, 4096L, 0);
            if (n < 0) {
                return Optional.empty(); // EAGAIN: the timeout (or EINTR: treated alike)
            }
            return Optional.of(new String(buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public void close() {
        try {
            int closed = (int) CLOSE.invokeExact(fd);
            assert closed == 0;
        } catch (Throwable ignored) {
            // closing
        }
    }
}
