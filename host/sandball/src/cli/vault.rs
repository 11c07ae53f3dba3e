//! `sandball vault`: the ansible-vault of sandball — `encrypt`, `decrypt`, `view`,
//! `edit`, `create`, `rekey` files and `encrypt_string`, in the format ansible-vault
//! reads and writes. Files are rewritten atomically (temporary file and rename),
//! keeping their mode; `edit` and `create` hand the plain text to `$EDITOR` in a
//! private temporary file, removed afterwards.

use super::CliError;
use crate::vault::{self, Secret};
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Flags of `sandball vault`.
#[derive(Args, Debug)]
pub struct VaultArgs {
    #[command(subcommand)]
    action: Action,
    /// A file holding the vault password, or a program printing it.
    #[arg(
        long = "vault-password-file",
        alias = "vault-pass-file",
        global = true,
        env = "ANSIBLE_VAULT_PASSWORD_FILE"
    )]
    password_file: Option<PathBuf>,
    /// The vault id to encrypt with (`label@file`, or `label@prompt`).
    #[arg(long = "vault-id", global = true)]
    vault_id: Option<String>,
    /// Ask for the vault password.
    #[arg(
        short = 'J',
        long = "ask-vault-pass",
        alias = "ask-vault-password",
        global = true
    )]
    ask_vault_pass: bool,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Encrypt files in place (or to --output).
    Encrypt {
        /// The files.
        files: Vec<PathBuf>,
        /// Write here instead (`-` for standard output).
        #[arg(long = "output")]
        output: Option<PathBuf>,
    },
    /// Decrypt files in place (or to --output).
    Decrypt {
        /// The files.
        files: Vec<PathBuf>,
        /// Write here instead (`-` for standard output).
        #[arg(long = "output")]
        output: Option<PathBuf>,
    },
    /// Print decrypted files.
    View {
        /// The files.
        files: Vec<PathBuf>,
    },
    /// Encrypt a string for a playbook (`name: !vault |`).
    #[command(name = "encrypt_string", alias = "encrypt-string")]
    EncryptString {
        /// The text to encrypt.
        text: String,
        /// The variable name to print it under.
        #[arg(long = "name", short = 'n')]
        name: Option<String>,
    },
    /// Edit an encrypted file with `$EDITOR` (default `vi`); it is encrypted again
    /// when it changed.
    Edit {
        /// The file.
        file: PathBuf,
    },
    /// Make a new encrypted file, written with `$EDITOR` (default `vi`).
    Create {
        /// The file (it must not exist).
        file: PathBuf,
    },
    /// Encrypt files again with a new password.
    Rekey {
        /// The files.
        files: Vec<PathBuf>,
        /// The new password's file.
        #[arg(long = "new-vault-password-file")]
        new_password_file: PathBuf,
    },
}

/// The secret the flags give.
fn secret(args: &VaultArgs) -> Result<Secret, CliError> {
    match (&args.vault_id, &args.password_file) {
        (Some(id), _) => super::vault_id_secret(id),
        (None, Some(file)) => super::vault_file_secret("default", file),
        (None, None) if args.ask_vault_pass => super::asked_vault_secret("default", false),
        (None, None) => Err(CliError::options(
            "a vault password is needed: --vault-password-file, --vault-id or --ask-vault-pass",
        )),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| CliError::other(format!("cannot read {}: {e}", path.display())))
}

/// Writes `data` to `path` atomically, keeping its mode; `-` is standard output.
fn write(path: &Path, data: &[u8]) -> Result<(), CliError> {
    if path == Path::new("-") {
        return std::io::stdout()
            .write_all(data)
            .map_err(|e| CliError::other(e.to_string()));
    }
    crate::local_files::write_atomically(path, data)
        .map_err(|e| CliError::other(format!("cannot write {}: {e}", path.display())))
}

/// `plain` handed to `$EDITOR` (default `vi`) in a file only its user can read, in a
/// directory of its own that is removed afterwards; what the editor left.
fn edited(plain: &[u8], name: &Path) -> Result<Vec<u8>, CliError> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |e: std::io::Error| CliError::other(format!("cannot edit {}: {e}", name.display()));
    let dir = tempfile::Builder::new()
        .prefix("sandball-vault-")
        .tempdir()
        .map_err(fail)?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
    let file = dir.path().join(
        name.file_name()
            .map_or_else(|| "vault".into(), |n| n.to_os_string()),
    );
    std::fs::write(&file, plain).map_err(fail)?;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
    let editor = std::env::var("EDITOR")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    // `$EDITOR` may hold arguments (`code --wait`): the shell splits it.
    let status = std::process::Command::new("/bin/sh")
        .envs(crate::config::settings().from_file())
        .args(["-c", &format!("{editor} \"$1\""), "sh"])
        .arg(&file)
        .status()
        .map_err(fail)?;
    if !status.success() {
        return Err(CliError::other(format!(
            "the editor ({editor}) failed ({status}); {} is unchanged",
            name.display()
        )));
    }
    let text = std::fs::read(&file).map_err(fail)?;
    // The plain text is overwritten before the directory goes.
    let _ = std::fs::write(&file, vec![0u8; text.len()]);
    Ok(text)
}

fn decrypted(path: &Path, secret: &Secret) -> Result<Vec<u8>, CliError> {
    let text = String::from_utf8(read(path)?)
        .map_err(|_| CliError::other(format!("{} is not a vault file", path.display())))?;
    vault::decrypt(&text, std::slice::from_ref(secret))
        .map_err(|e| CliError::other(format!("{e} for {}", path.display())))
}

/// Runs `sandball vault`.
pub fn run(args: VaultArgs) -> Result<i32, CliError> {
    let s = secret(&args)?;
    match &args.action {
        Action::Encrypt { files, output } => {
            for f in files {
                let plain = read(f)?;
                if vault::is_vault(&String::from_utf8_lossy(&plain)) {
                    return Err(CliError::other(format!(
                        "input is already encrypted: {}",
                        f.display()
                    )));
                }
                write(
                    output.as_deref().unwrap_or(f),
                    vault::encrypt(&plain, &s).as_bytes(),
                )?;
            }
            eprintln!("Encryption successful");
        }
        Action::Decrypt { files, output } => {
            for f in files {
                let plain = decrypted(f, &s)?;
                write(output.as_deref().unwrap_or(f), &plain)?;
            }
            eprintln!("Decryption successful");
        }
        Action::View { files } => {
            for f in files {
                let plain = decrypted(f, &s)?;
                std::io::stdout()
                    .write_all(&plain)
                    .map_err(|e| CliError::other(e.to_string()))?;
            }
        }
        Action::EncryptString { text, name } => {
            let sealed = vault::encrypt(text.as_bytes(), &s);
            let indented: String = sealed.lines().map(|l| format!("          {l}\n")).collect();
            match name {
                Some(n) => print!("{n}: !vault |\n{indented}"),
                None => print!("!vault |\n{indented}"),
            }
        }
        Action::Edit { file } => {
            let plain = decrypted(file, &s)?;
            let changed = edited(&plain, file)?;
            if changed != plain {
                write(file, vault::encrypt(&changed, &s).as_bytes())?;
            }
        }
        Action::Create { file } => {
            if file.exists() {
                return Err(CliError::other(format!(
                    "{} exists, please use 'edit' instead",
                    file.display()
                )));
            }
            let plain = edited(b"", file)?;
            write(file, vault::encrypt(&plain, &s).as_bytes())?;
        }
        Action::Rekey {
            files,
            new_password_file,
        } => {
            let new = Secret {
                label: s.label.clone(),
                password: vault::password_from(new_password_file).map_err(CliError::options)?,
            };
            for f in files {
                let plain = decrypted(f, &s)?;
                write(f, vault::encrypt(&plain, &new).as_bytes())?;
            }
            eprintln!("Rekey successful");
        }
    }
    Ok(0)
}
