package io.continuum.broker.testing.kube;

/** Keeps the package non-empty until its first real class lands; delete then. */
final class PackageMarker {
    private PackageMarker() {
    }
}
