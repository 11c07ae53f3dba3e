//! The [`manifest!`](crate::manifest) macro: embeds a module's `manifest.json` in its
//! component, in the `sandball:manifest` custom section (so the component's sha256
//! covers it), and gives the module the same text as `MANIFEST` for [`run`](crate::run).

/// Embeds the manifest at `path` (relative to the file that invokes the macro) and
/// defines `const MANIFEST: &str` with its text.
///
/// ```text
/// sandball_guest_sdk::manifest!("../manifest.json");
/// fn main() {
///     sandball_guest_sdk::run(MANIFEST, |m| Ok(sandball_guest_sdk::json_map!({"ping": "pong"})));
/// }
/// ```
#[macro_export]
macro_rules! manifest {
    ($path:literal) => {
        // `#[used]` keeps the bytes through LTO; wasm-ld turns the section into a
        // custom section of the core module, which the component embeds unchanged.
        #[used]
        #[cfg_attr(target_arch = "wasm32", unsafe(link_section = "sandball:manifest"))]
        static __SANDBALL_MANIFEST_SECTION: [u8; include_bytes!($path).len()] =
            *include_bytes!($path);

        /// The module's manifest (JSON), also embedded in its `sandball:manifest` section.
        const MANIFEST: &str = include_str!($path);
    };
}
