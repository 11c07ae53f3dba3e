//! The node's kernel tables the `sandball:host/system` interface serves by name (the
//! shim's own mount and route tables, and the name and control groups of process 1):
//! read-only facts any process on the node can read, served by name so that a module
//! needs no grant of `/proc` process directories, which hold environments.

/// Each table's name and the file it is read from.
pub const TABLES: &[(&str, &str)] = &[
    ("mounts", "/proc/self/mounts"),
    ("mountinfo", "/proc/self/mountinfo"),
    ("net/route", "/proc/self/net/route"),
    ("net/ipv6_route", "/proc/self/net/ipv6_route"),
    ("net/if_inet6", "/proc/self/net/if_inet6"),
    ("net/fib_trie", "/proc/self/net/fib_trie"),
    ("init/comm", "/proc/1/comm"),
    ("init/cgroup", "/proc/1/cgroup"),
];

/// The file table `name` is read from, if it is one of [`TABLES`].
pub fn path(name: &str) -> Option<&'static str> {
    TABLES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// The names of the tables, for messages.
pub fn names() -> String {
    TABLES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}
