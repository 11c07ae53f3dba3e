//! Colours as ansible-playbook chooses them: always when `ANSIBLE_FORCE_COLOR`
//! (`force_color` in ansible.cfg) says yes, else on a terminal unless `ANSIBLE_NOCOLOR`
//! (`nocolor`) or `NO_COLOR` says no; each kind of line in the colour `[colors]` (or its
//! `ANSIBLE_COLOR_*` variable) names, Ansible's defaults otherwise.

use std::io::IsTerminal;

/// What a piece of output is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `ok:` lines.
    Ok,
    /// `changed:` lines.
    Changed,
    /// `skipping:` lines.
    Skip,
    /// `UNREACHABLE!`.
    Unreachable,
    /// Failures and errors.
    Error,
    /// `[WARNING]:`.
    Warn,
    /// `[DEPRECATION WARNING]:`.
    Deprecate,
    /// `-v` messages.
    Verbose,
    /// Added lines of a diff.
    DiffAdd,
    /// Removed lines of a diff.
    DiffRemove,
    /// A diff's `@@` lines.
    DiffLines,
    /// Debug lines (`task path:`).
    Debug,
}

impl Role {
    /// The `[colors]` key and Ansible's default colour.
    fn setting(self) -> (&'static str, &'static str) {
        match self {
            Role::Ok => ("ok", "green"),
            Role::Changed => ("changed", "yellow"),
            Role::Skip => ("skip", "cyan"),
            Role::Unreachable => ("unreachable", "bright red"),
            Role::Error => ("error", "red"),
            Role::Warn => ("warn", "bright purple"),
            Role::Deprecate => ("deprecate", "purple"),
            Role::Verbose => ("verbose", "blue"),
            Role::DiffAdd => ("diff_add", "green"),
            Role::DiffRemove => ("diff_remove", "red"),
            Role::DiffLines => ("diff_lines", "cyan"),
            Role::Debug => ("debug", "dark gray"),
        }
    }

    /// Every role, for the settings list.
    pub const ALL: [Role; 12] = [
        Role::Ok,
        Role::Changed,
        Role::Skip,
        Role::Unreachable,
        Role::Error,
        Role::Warn,
        Role::Deprecate,
        Role::Verbose,
        Role::DiffAdd,
        Role::DiffRemove,
        Role::DiffLines,
        Role::Debug,
    ];

    /// Its `[colors]` key in ansible.cfg.
    pub fn key(self) -> &'static str {
        self.setting().0
    }

    /// Its environment variable (`ANSIBLE_COLOR_OK`…).
    pub fn variable(self) -> String {
        format!("ANSIBLE_COLOR_{}", self.key().to_ascii_uppercase())
    }
}

/// The SGR code of a colour name as Ansible spells them (`bright blue`, `dark gray`,
/// `normal`); `None` for a name it does not know.
pub fn code(name: &str) -> Option<&'static str> {
    let name = name.trim().to_ascii_lowercase().replace('_', " ");
    Some(match name.as_str() {
        "black" => "0;30",
        "red" => "0;31",
        "green" => "0;32",
        "yellow" => "0;33",
        "blue" => "0;34",
        "purple" | "magenta" => "0;35",
        "cyan" => "0;36",
        "bright gray" | "bright grey" | "light gray" | "light grey" => "0;37",
        "dark gray" | "dark grey" => "1;30",
        "bright red" => "1;31",
        "bright green" => "1;32",
        "bright yellow" => "1;33",
        "bright blue" => "1;34",
        "bright purple" | "bright magenta" => "1;35",
        "bright cyan" => "1;36",
        "white" => "1;37",
        "normal" => "0",
        _ => return None,
    })
}

/// The colours of a run, or none.
#[derive(Clone, Debug, Default)]
pub struct Palette {
    codes: Option<Vec<(Role, String)>>,
}

impl Palette {
    /// No colour at all.
    pub fn plain() -> Palette {
        Palette { codes: None }
    }

    /// The colours for output to stdout, as the environment and ansible.cfg say.
    pub fn for_stdout() -> Palette {
        // As in Ansible, forcing colours wins over turning them off.
        let settings = crate::config::settings();
        let on = if settings.flag("ANSIBLE_FORCE_COLOR", false) {
            true
        } else if settings.flag("ANSIBLE_NOCOLOR", false) || settings.get_os("NO_COLOR").is_some() {
            false
        } else {
            std::io::stdout().is_terminal()
        };
        if on {
            Palette::ansible()
        } else {
            Palette::plain()
        }
    }

    /// Ansible's colours, as `[colors]`/`ANSIBLE_COLOR_*` change them; a name that is
    /// not a colour keeps the default.
    pub fn ansible() -> Palette {
        let codes = Role::ALL
            .iter()
            .map(|&role| {
                let (_, default) = role.setting();
                let chosen = crate::config::settings()
                    .get(&role.variable())
                    .and_then(code)
                    .or_else(|| code(default))
                    .unwrap_or("0");
                (role, chosen.to_string())
            })
            .collect();
        Palette { codes: Some(codes) }
    }

    /// Whether it colours anything.
    pub fn is_on(&self) -> bool {
        self.codes.is_some()
    }

    /// `text` in the colour of `role`, each line on its own as Ansible paints them (as
    /// is without colours).
    pub fn paint(&self, text: &str, role: Role) -> String {
        match self
            .codes
            .as_ref()
            .and_then(|c| c.iter().find(|(r, _)| *r == role))
        {
            Some((_, code)) => text
                .split('\n')
                .map(|line| format!("\x1b[{code}m{line}\x1b[0m"))
                .collect::<Vec<_>>()
                .join("\n"),
            None => text.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ansibles() {
        assert_eq!(code("bright purple"), Some("1;35"));
        assert_eq!(code("Dark_Gray"), Some("1;30"));
        assert_eq!(code("mauve"), None);
        let p = Palette::ansible();
        assert!(p.is_on());
        assert_eq!(Role::Unreachable.variable(), "ANSIBLE_COLOR_UNREACHABLE");
        assert_eq!(Palette::plain().paint("ok", Role::Ok), "ok");
        assert_eq!(
            p.paint("a\n", Role::Error),
            format!(
                "\x1b[{0}ma\x1b[0m\n\x1b[{0}m\x1b[0m",
                code("red").unwrap_or_default()
            )
        );
    }
}
