# Sourced by the consumer checks: writes the Package.swift of a new package that depends on this
# checkout ($root) as a user's would, by path. Swift 6 language mode, one executable target each.

# Prints an executable target NAME that uses the library products given after it.
consumer_target() {
    local name=$1
    shift
    printf '        .executableTarget(name: "%s", dependencies: [\n' "$name"
    for product in "$@"; do
        printf '            .product(name: "%s", package: "%s"),\n' "$product" "$(basename "$root")"
    done
    printf '        ], swiftSettings: [.swiftLanguageMode(.v6)]),\n'
}

# Writes DIR/Package.swift with the targets read from stdin (consumer_target's output).
consumer_manifest() {
    {
        printf '// swift-tools-version:6.0\nimport PackageDescription\nlet package = Package(\n'
        printf '    name: "App",\n    dependencies: [.package(path: "%s")],\n    targets: [\n' "$root"
        cat
        printf '    ])\n'
    } >"$1/Package.swift"
}
