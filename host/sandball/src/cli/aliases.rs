//! `sandball install-aliases DIR`: links named after Ansible's commands
//! (`ansible-playbook`, `ansible`, `ansible-inventory`, `ansible-vault`,
//! `ansible-config`, `ansible-doc`) to this sandball, so that tools written for Ansible
//! (ansible-runner, Molecule, CI scripts) run sandball where they run those. Opt-in: a
//! link never replaces another program of that name unless `--force` says so; each is
//! made under a temporary name and renamed into place.

use super::{ANSIBLE_COMMANDS, CliError};
use clap::Args;
use std::path::{Path, PathBuf};

/// Flags of `sandball install-aliases`.
#[derive(Args, Debug)]
pub struct AliasArgs {
    /// The directory to put the links in (made if missing), e.g. the venv's `bin`.
    dir: PathBuf,
    /// Replace programs of those names that are not links to this sandball.
    #[arg(long)]
    force: bool,
}

/// Makes the links; says which it made and which were already there.
pub fn run(args: AliasArgs) -> Result<i32, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::other(format!("cannot tell where sandball is: {e}")))?;
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| CliError::other(format!("cannot create {}: {e}", args.dir.display())))?;
    // Every name is checked before any link is made: a refusal changes nothing.
    let mut todo = Vec::new();
    for (name, _) in ANSIBLE_COMMANDS {
        let link = args.dir.join(name);
        match existing(&link, &exe) {
            Existing::Nothing => todo.push(link),
            Existing::Ours => println!("{} already runs sandball", link.display()),
            Existing::Other if args.force => todo.push(link),
            Existing::Other => {
                return Err(CliError::other(format!(
                    "{} exists and is not a link to {}: leaving it (--force replaces it)",
                    link.display(),
                    exe.display()
                )));
            }
        }
    }
    for link in todo {
        replace_with_link(&link, &exe).map_err(|e| {
            CliError::other(format!("cannot make the link {}: {e}", link.display()))
        })?;
        println!("{} -> {}", link.display(), exe.display());
    }
    Ok(0)
}

/// What is at a link's place.
enum Existing {
    Nothing,
    /// A link (or a chain of them) to this sandball.
    Ours,
    Other,
}

fn existing(path: &Path, exe: &Path) -> Existing {
    if std::fs::symlink_metadata(path).is_err() {
        return Existing::Nothing;
    }
    match std::fs::canonicalize(path) {
        Ok(target) if target == exe => Existing::Ours,
        _ => Existing::Other,
    }
}

/// A symbolic link to `target` at `link`, made beside it and renamed over whatever is
/// there.
fn replace_with_link(link: &Path, target: &Path) -> std::io::Result<()> {
    let name = link.file_name().and_then(|n| n.to_str()).unwrap_or("link");
    let temp = link.with_file_name(format!(".{name}.sandball-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(target, &temp)?;
    std::fs::rename(&temp, link).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_ours_when_it_leads_to_the_executable() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("sandball");
        std::fs::write(&exe, "").unwrap();
        let exe = std::fs::canonicalize(&exe).unwrap();
        let link = d.path().join("ansible");
        assert!(matches!(existing(&link, &exe), Existing::Nothing));
        replace_with_link(&link, &exe).unwrap();
        assert!(matches!(existing(&link, &exe), Existing::Ours));
        std::fs::write(d.path().join("other"), "").unwrap();
        replace_with_link(&link, &d.path().join("other")).unwrap();
        assert!(matches!(existing(&link, &exe), Existing::Other));
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("gone"), &dangling).unwrap();
        assert!(matches!(existing(&dangling, &exe), Existing::Other));
    }
}
