//! `sandball module pack --manifest manifest.json app.wasm -o name.wasm`: embeds a
//! module's manifest in a component built by any tool (or replaces the one it has),
//! checked against what the component imports, as `sandball audit module` checks it.
//! `sandball module new --lang rust|python|js NAME` scaffolds a module ([`super::scaffold`]).

use super::CliError;
use crate::assemble::component;
use crate::policy::imports::{self, Reach};
use clap::{Args, Subcommand};
use sandball_wire::manifest::Manifest;
use std::path::PathBuf;

/// Flags of `sandball module`.
#[derive(Args, Debug)]
pub struct ModuleArgs {
    #[command(subcommand)]
    what: ModuleCommand,
}

#[derive(Subcommand, Debug)]
enum ModuleCommand {
    /// Embed (or replace) a manifest in a component, checked against its imports.
    Pack(PackArgs),
    /// Scaffold a new module: NAME/ with its manifest, source, test playbook and Makefile.
    New(NewArgs),
}

/// Flags of `sandball module new`.
#[derive(Args, Debug)]
struct NewArgs {
    /// The module's language.
    #[arg(long = "lang", value_enum)]
    lang: super::scaffold::Lang,
    /// The module's name (the directory made, and the file `make` builds: NAME.wasm).
    #[arg(value_name = "NAME")]
    name: String,
    /// Where to make NAME/ (default: the current directory).
    #[arg(long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The guest SDK's directory (guest-sdk/ of a sandball checkout; default: the one
    /// of the checkout this sandball was built in).
    #[arg(long = "sdk", value_name = "DIR")]
    sdk: Option<PathBuf>,
}

/// Flags of `sandball module pack`.
#[derive(Args, Debug)]
struct PackArgs {
    /// The module's manifest (JSON).
    #[arg(long = "manifest", value_name = "FILE")]
    manifest: PathBuf,
    /// The component, as its language's tool built it.
    #[arg(value_name = "COMPONENT.wasm")]
    component: PathBuf,
    /// The module component to write (named after the module: `NAME.wasm`).
    #[arg(short = 'o', long = "output", value_name = "NAME.wasm")]
    output: PathBuf,
}

/// Runs `sandball module`; returns the exit code.
pub fn run(args: ModuleArgs) -> Result<i32, CliError> {
    match args.what {
        ModuleCommand::Pack(a) => pack(a),
        ModuleCommand::New(a) => super::scaffold::new(a.lang, &a.name, &a.dir, a.sdk.as_deref()),
    }
}

/// Packs; prints the findings on stderr. An import the shim does not provide (the module
/// could never run) is refused and nothing is written; the other findings are those of
/// `sandball audit module`, as warnings.
fn pack(a: PackArgs) -> Result<i32, CliError> {
    let read = |path: &PathBuf| {
        std::fs::read(path).map_err(|e| CliError::other(format!("{}: {e}", path.display())))
    };
    let text = read(&a.manifest)?;
    let manifest = Manifest::from_json(&text)
        .map_err(|e| CliError::other(format!("{}: {e}", a.manifest.display())))?;
    let bytes = read(&a.component)?;
    let packed = component::with_manifest(&bytes, &text)
        .map_err(|e| CliError::other(format!("{}: {e}", a.component.display())))?;
    let imported = imports::component_imports(&packed)
        .map_err(|e| CliError::other(format!("{}: {e}", a.component.display())))?;
    let unknown: Vec<&str> = imported
        .iter()
        .filter(|i| i.reach == Reach::Unknown)
        .map(|i| i.name.as_str())
        .collect();
    if !unknown.is_empty() {
        return Err(CliError::other(format!(
            "{}: imports {}, which the shim does not provide: the module could never run (nothing written)",
            a.component.display(),
            unknown.join(", ")
        )));
    }
    // Packing goes on whatever the manifest leaves uncovered (`sandball audit module`
    // ranks those as errors): an interface no grant covers reaches nothing when the
    // module runs, so here each finding is a warning.
    for finding in imports::findings(&manifest, &imported) {
        eprintln!("[WARNING]: {}: {}", a.component.display(), finding.message);
    }
    let stem = a.output.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if stem != manifest.name {
        eprintln!(
            "[WARNING]: {} is named {}, the module {}: tasks find a component by its file name",
            a.output.display(),
            stem,
            manifest.name
        );
    }
    crate::local_files::write_atomically(&a.output, &packed)
        .map_err(|e| CliError::other(format!("{}: {e}", a.output.display())))?;
    println!(
        "{}: module {}, {} bytes",
        a.output.display(),
        manifest.name,
        packed.len()
    );
    Ok(0)
}
