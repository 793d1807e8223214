package io.continuum.broker.testing.pki;

/** Keeps the package non-empty until its first real class lands; delete then. */
final class PackageMarker {
    private PackageMarker() {
    }
}
