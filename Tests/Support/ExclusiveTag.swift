import Testing

extension Tag {
    /// A suite that needs the machine to itself: it stops or starves something every test
    /// shares (the cooperative pool, a daemon other suites use, a process-wide setting).
    /// `scripts/test.sh` runs the suites so tagged after the parallel part, one test at a time;
    /// it finds them by this tag in their `@Suite` attribute.
    @Tag package static var exclusive: Tag
}
