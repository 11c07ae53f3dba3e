# A file without an extension is read too.
max_heap: 2g
