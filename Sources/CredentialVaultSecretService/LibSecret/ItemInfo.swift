import Foundation

/// A Secret Service item as `Properties.GetAll` describes it (one round trip, no proxy).
struct ItemInfo {
    /// The item's D-Bus object path (its identity).
    let objectPath: String
    /// The item's attributes.
    let attributes: [String: String]
    /// The item's label.
    let label: String
    /// When the daemon created the item (seconds since 1970).
    let created: UInt64
    /// When the daemon last modified the item (seconds since 1970).
    let modified: UInt64

    /// `created` as a date; `nil` when the daemon did not say (0: the property was missing).
    var createdDate: Date? { Self.date(created) }
    /// `modified` as a date; `nil` when the daemon did not say.
    var modifiedDate: Date? { Self.date(modified) }

    private static func date(_ seconds: UInt64) -> Date? {
        seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A total order on items, the same in every process: by modification time, then creation
    /// time, then the number the daemon put at the end of the object path (it grows with each
    /// new item), then the path. The greatest is the current value of a key that has several items.
    var order: ItemOrder {
        let last = objectPath.split(separator: "/").last.map(String.init) ?? ""
        return ItemOrder(modified: modified, created: created, serial: UInt64(last) ?? 0, path: objectPath)
    }
}

/// See `ItemInfo.order`.
struct ItemOrder: Comparable {
    var modified: UInt64
    var created: UInt64
    var serial: UInt64
    var path: String

    static func < (lhs: ItemOrder, rhs: ItemOrder) -> Bool {
        (lhs.modified, lhs.created, lhs.serial) < (rhs.modified, rhs.created, rhs.serial)
            || ((lhs.modified, lhs.created, lhs.serial) == (rhs.modified, rhs.created, rhs.serial) && lhs.path < rhs.path)
    }
}
