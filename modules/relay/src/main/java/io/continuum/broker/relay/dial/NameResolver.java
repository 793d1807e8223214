package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;

/**
 * Turns a DNS name into addresses. The default is the JDK's resolver; tests supply one that maps
 * names to given addresses or never answers. Implementations may block; {@link TargetResolver}
 * bounds the wait and runs them on a virtual thread of their own.
 */
@FunctionalInterface
public interface NameResolver {
    /**
     * Resolves a name.
     *
     * @param name lower-case DNS name as {@code Host.DnsName} holds it (never an IP literal)
     * @return addresses in the resolver's order, possibly empty
     * @throws IOException when the name does not resolve
     */
    List<InetAddress> resolve(String name) throws IOException;

    /**
     * The JDK's resolver ({@link InetAddress#getAllByName}, honouring the JDK's address cache and
     * {@code java.net.preferIPv6Addresses}).
     *
     * @return resolver
     */
    static NameResolver system() {
        return name -> List.of(InetAddress.getAllByName(name));
    }
}
