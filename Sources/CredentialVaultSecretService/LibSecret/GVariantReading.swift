import CLibSecret

/// Reading and building the few GVariant shapes of the Secret Service properties
/// (`g_variant_new` and `g_variant_get` are variadic and do not import into Swift).
enum GVariantReading {
    /// The string of an `s` or `o` variant, else `nil`.
    static func string(_ value: OpaquePointer) -> String? {
        let type = String(cString: g_variant_get_type_string(value))
        guard type == "s" || type == "o" else { return nil }
        return String(cString: g_variant_get_string(value, nil))
    }

    /// The entries of an `a{sv}` (values unwrapped from their variant) or `a{ss}` dictionary,
    /// given to `body` one by one (borrowed: do not keep them).
    static func forEachEntry(_ dictionary: OpaquePointer, _ body: (String, OpaquePointer) -> Void) {
        let count = g_variant_n_children(dictionary)
        var index: gsize = 0
        while index < count {
            defer { index += 1 }
            guard let entry = g_variant_get_child_value(dictionary, index) else { continue }
            defer { g_variant_unref(entry) }
            guard g_variant_n_children(entry) == 2, let keyValue = g_variant_get_child_value(entry, 0) else { continue }
            defer { g_variant_unref(keyValue) }
            guard let key = string(keyValue), let boxed = g_variant_get_child_value(entry, 1) else { continue }
            defer { g_variant_unref(boxed) }
            if String(cString: g_variant_get_type_string(boxed)) == "v" {
                guard let inner = g_variant_get_variant(boxed) else { continue }
                defer { g_variant_unref(inner) }
                body(key, inner)
            } else {
                body(key, boxed)
            }
        }
    }

    /// The strings (or object paths) of the array that is child `index` of the tuple `tuple`;
    /// `[]` when there is no such child.
    static func strings(_ tuple: OpaquePointer, child index: gsize) -> [String] {
        guard g_variant_n_children(tuple) > index, let list = g_variant_get_child_value(tuple, index) else { return [] }
        defer { g_variant_unref(list) }
        return strings(inArray: list)
    }

    /// The object path that is child `index` of the tuple `tuple`; `nil` for `/` (none) or
    /// when there is no such child.
    static func path(_ tuple: OpaquePointer, child index: gsize) -> String? {
        guard g_variant_n_children(tuple) > index, let child = g_variant_get_child_value(tuple, index) else { return nil }
        defer { g_variant_unref(child) }
        return string(child).flatMap { $0 == "/" || $0.isEmpty ? nil : $0 }
    }

    /// The strings (or object paths) of an array variant (`as`, `ao`); `[]` for anything else.
    static func strings(inArray list: OpaquePointer) -> [String] {
        guard g_variant_is_container(list) != 0 else { return [] }
        var result: [String] = []
        let count = g_variant_n_children(list)
        var position: gsize = 0
        while position < count {
            if let child = g_variant_get_child_value(list, position) {
                if let text = string(child) { result.append(text) }
                g_variant_unref(child)
            }
            position += 1
        }
        return result
    }

    /// An `a{ss}` dictionary read into Swift, else `[:]`.
    static func stringDictionary(_ value: OpaquePointer) -> [String: String] {
        guard String(cString: g_variant_get_type_string(value)) == "a{ss}" else { return [:] }
        var result: [String: String] = [:]
        forEachEntry(value) { key, entry in result[key] = string(entry) }
        return result
    }

    /// A floating `a{ss}` variant of `dictionary`.
    static func makeStringDictionary(_ dictionary: [String: String]) -> OpaquePointer {
        var entries: [OpaquePointer?] = dictionary.sorted { $0.key < $1.key }.map { key, value in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_string(value))
        }
        let entryType = g_variant_type_new("{ss}")
        defer { g_variant_type_free(entryType) }
        return entries.withUnsafeMutableBufferPointer { buffer in
            g_variant_new_array(entryType, buffer.baseAddress, gsize(buffer.count))
        }
    }

    /// A floating `a{sv}` variant of D-Bus properties (each value, floating, is boxed in a variant).
    static func makePropertyDictionary(_ properties: [(name: String, value: OpaquePointer?)]) -> OpaquePointer {
        var entries: [OpaquePointer?] = properties.map { name, value in
            g_variant_new_dict_entry(g_variant_new_string(name), g_variant_new_variant(value))
        }
        let entryType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(entryType) }
        return entries.withUnsafeMutableBufferPointer { buffer in
            g_variant_new_array(entryType, buffer.baseAddress, gsize(buffer.count))
        }
    }

    /// A floating tuple of the strings (`(ss)`, ...).
    static func makeStringTuple(_ strings: [String]) -> OpaquePointer {
        var children: [OpaquePointer?] = strings.map { g_variant_new_string($0) }
        return children.withUnsafeMutableBufferPointer { buffer in
            g_variant_new_tuple(buffer.baseAddress, gsize(buffer.count))
        }
    }
}
