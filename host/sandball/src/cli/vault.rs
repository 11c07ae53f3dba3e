//! `sandball vault`: the ansible-vault of sandball — `encrypt`, `decrypt`, `view`,
//! `rekey` files and `encrypt_string`, in the format ansible-vault reads and writes.
//! Files are rewritten atomically (temporary file and rename), keeping their mode.

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
    /// The vault id to encrypt with (`label@file`).
    #[arg(long = "vault-id", global = true)]
    vault_id: Option<String>,
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
    let (label, path) = match (&args.vault_id, &args.password_file) {
        (Some(id), _) => match id.split_once('@') {
            Some((label, source)) => (label.to_string(), PathBuf::from(source)),
            None => ("default".to_string(), PathBuf::from(id)),
        },
        (None, Some(file)) => ("default".to_string(), file.clone()),
        (None, None) => {
            return Err(CliError::options(
                "a vault password is needed: --vault-password-file or --vault-id",
            ));
        }
    };
    Ok(Secret {
        label,
        password: vault::password_from(&path).map_err(CliError::options)?,
    })
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
    let fail = |e: std::io::Error| CliError::other(format!("cannot write {}: {e}", path.display()));
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".sandball-vault-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(data).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(fail)?;
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
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
