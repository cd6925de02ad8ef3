# Sourced by the consumer checks: writes the Package.swift of a new package that depends on this
# checkout ($root) as a user's would, by path. Swift 6 language mode, one executable target each.

# Prints an executable target NAME that uses the library products given after it: PRODUCT (this
# package's) or PRODUCT@PACKAGE (another package's, e.g. Logging@swift-log).
consumer_target() {
    local name=$1 product package
    shift
    printf '        .executableTarget(name: "%s", dependencies: [\n' "$name"
    for product in "$@"; do
        package=$(basename "$root")
        case "$product" in *@*) package=${product#*@} product=${product%@*} ;; esac
        printf '            .product(name: "%s", package: "%s"),\n' "$product" "$package"
    done
    printf '        ], swiftSettings: [.swiftLanguageMode(.v6)]),\n'
}

# Writes DIR/Package.swift with the targets read from stdin (consumer_target's output). TRAITS
# (optional, space-separated) are this package's traits the consumer enables; with them it also
# depends on the server packages it then uses itself (swift-log, swift-configuration and
# swift-service-lifecycle), from their usual URLs.
consumer_manifest() {
    local dir=$1 traits=${2:-} list=
    for trait in $traits; do list="$list\"$trait\", "; done
    {
        printf '// swift-tools-version:6.1\nimport PackageDescription\nlet package = Package(\n    name: "App",\n    dependencies: [\n'
        if [ -n "$traits" ]; then
            printf '        .package(path: "%s", traits: [%s]),\n' "$root" "${list%, }"
            printf '        .package(url: "https://github.com/apple/swift-log.git", from: "1.11.0"),\n'
            printf '        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0"),\n'
            printf '        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.8.0"),\n'
        else
            printf '        .package(path: "%s"),\n' "$root"
        fi
        printf '    ],\n    targets: [\n'
        cat
        printf '    ])\n'
    } >"$dir/Package.swift"
}
