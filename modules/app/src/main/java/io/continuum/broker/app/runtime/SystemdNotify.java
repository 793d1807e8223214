package io.continuum.broker.app.runtime;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The service manager's notification protocol, sd_notify(3), without libsystemd: one datagram of
 * {@code KEY=VALUE} lines to the {@code AF_UNIX} socket named by {@code $NOTIFY_SOCKET}, which systemd sets for a
 * {@code Type=notify} unit. The JDK's channels have no Unix datagram sockets, so the three libc calls go through
 * the foreign-function API ({@code socket}, {@code sendto}, {@code close}; a restricted API: the launcher enables
 * native access for this module). Linux only, like the unit; a path or an abstract ({@code @}) address.
 */
public final class SystemdNotify {
    /** The variable systemd sets for a notify-type unit. */
    public static final String SOCKET_VARIABLE = "NOTIFY_SOCKET";

    /** {@code sizeof(sun_path)} on Linux. */
    private static final int SUN_PATH = 108;

    private final String socket;
    private final byte[] address;

    private SystemdNotify(String socket, byte[] address) {
        this.socket = socket;
        this.address = address;
    }

    /**
     * The notifier of this process, when its service manager asks for notifications.
     *
     * @param environment the process environment
     * @return empty without {@code $NOTIFY_SOCKET} (not a notify-type unit, or not under systemd)
     * @throws IllegalArgumentException when the variable names no address this supports
     */
    public static Optional<SystemdNotify> fromEnvironment(Map<String, String> environment) {
        String value = environment.get(SOCKET_VARIABLE);
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        byte[] name = value.getBytes(StandardCharsets.UTF_8);
        if (value.charAt(0) == '@') {
            name[0] = 0; // Linux's abstract namespace: a leading NUL, and no terminating one
        } else if (value.charAt(0) != '/') {
            throw new IllegalArgumentException(SOCKET_VARIABLE + " is neither a path nor an abstract address: "
                    + value);
        }
        if (name.length >= SUN_PATH) {
            throw new IllegalArgumentException(SOCKET_VARIABLE + " is longer than " + (SUN_PATH - 1) + " bytes");
        }
        return Optional.of(new SystemdNotify(value, name));
    }

    /** @return the socket's address as {@code $NOTIFY_SOCKET} named it */
    public String socket() {
        return socket;
    }

    /**
     * Sends one notification, e.g. {@code READY=1} or {@code STATUS=...} (newline-separated assignments).
     *
     * @param state the assignments
     * @throws NotifyException when the datagram cannot be sent (errno named)
     */
    public void send(String state) throws NotifyException {
        byte[] payload = state.getBytes(StandardCharsets.UTF_8);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = arena.allocate(Libc.CALL_STATE);
            int fd = (int) Libc.SOCKET.invokeExact(errno, Libc.AF_UNIX, Libc.SOCK_DGRAM | Libc.SOCK_CLOEXEC, 0);
            if (fd < 0) {
                throw new NotifyException("socket(AF_UNIX, SOCK_DGRAM)", Libc.errno(errno));
            }
            try {
                // struct sockaddr_un: sa_family_t sun_family; char sun_path[108]
                MemorySegment addr = arena.allocate(2 + SUN_PATH);
                addr.set(ValueLayout.JAVA_SHORT, 0, (short) Libc.AF_UNIX);
                MemorySegment.copy(address, 0, addr, ValueLayout.JAVA_BYTE, 2, address.length);
                // a path counts its terminating NUL (the segment is zeroed); an abstract name is exactly its bytes
                int length = 2 + address.length + (address[0] == 0 ? 0 : 1);
                MemorySegment buffer = arena.allocateFrom(ValueLayout.JAVA_BYTE, payload);
                long sent = (long) Libc.SENDTO.invokeExact(errno, fd, buffer, (long) payload.length,
                        Libc.MSG_NOSIGNAL, addr, length);
                if (sent < 0) {
                    throw new NotifyException("sendto(" + socket + ")", Libc.errno(errno));
                }
            } finally {
                int closed = (int) Libc.CLOSE.invokeExact(fd);
                assert closed == 0 || closed == -1;
            }
        } catch (NotifyException e) {
            throw e;
        } catch (Throwable t) {
            throw new NotifyException("the foreign call failed: " + t, 0);
        }
    }

    /** A notification that could not be sent. */
    public static final class NotifyException extends Exception {
        private final int errno;

        NotifyException(String call, int errno) {
            super(call + (errno == 0 ? "" : " failed: errno " + errno));
            this.errno = errno;
        }

        /** @return the C library's errno, 0 when none applies */
        public int errno() {
            return errno;
        }
    }

    /** The libc functions, looked up on first use only (the restricted API runs only under systemd). */
    private static final class Libc {
        static final int AF_UNIX = 1;
        static final int SOCK_DGRAM = 2;
        static final int SOCK_CLOEXEC = 0x80000;
        /** No SIGPIPE should the manager's socket be gone (sd_notify does the same). */
        static final int MSG_NOSIGNAL = 0x4000;
        static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
        static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
        static final VarHandle ERRNO_VALUE = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        static final MethodHandle SOCKET;
        static final MethodHandle SENDTO;
        static final MethodHandle CLOSE;

        static {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            SOCKET = linker.downcallHandle(libc.find("socket").orElseThrow(), FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), ERRNO);
            SENDTO = linker.downcallHandle(libc.find("sendto").orElseThrow(), FunctionDescriptor.of(
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT), ERRNO);
            CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        }

        static int errno(MemorySegment state) {
            return (int) ERRNO_VALUE.get(state, 0L);
        }

        private Libc() {
        }
    }
}
