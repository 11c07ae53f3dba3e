//! The `apt` module: installs, upgrades and removes Debian packages as ansible-core
//! 2.19's `apt` module does, through the node's apt-get, apt-cache, apt-mark and
//! dpkg-query (granted programs) instead of python3-apt: the same package states
//! (installed, the version installed, the version apt would install), the same
//! apt-get command lines, results (`cache_updated`, `cache_update_time`, `stdout`,
//! `stderr`, `diff`), check mode (`--simulate`) and messages. `state: build-dep` and
//! `fixed`, `upgrade`, `policy_rc_d`, `deb` URLs and `name: '*'` with `latest` are
//! refused by name.

#[cfg(all(test, unix))]
mod module_tests;
mod policy;
mod version;

use policy::{Policy, Status};
use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::{Ran, run_command};
use sandball_pycompat::shlex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, apt);
}

const APT_GET: &str = "/usr/bin/apt-get";
const APT_MARK: &str = "/usr/bin/apt-mark";
const DPKG: &str = "/usr/bin/dpkg";
const LISTS: &str = "/var/lib/apt/lists";
const UPDATE_STAMP: &str = "/var/lib/apt/periodic/update-success-stamp";

/// The environment the module's programs run with (no questions, a parsable locale).
pub(crate) const APT_ENV: &[(&str, &str)] = &[
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("DEBIAN_PRIORITY", "critical"),
    ("LANG", "C"),
    ("LC_ALL", "C"),
    ("LC_MESSAGES", "C"),
    ("LC_CTYPE", "C"),
    ("LANGUAGE", "C"),
];

/// The module's body.
fn apt(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    refuse_what_is_not_done(m)?;
    let lock_timeout = m.get_int("lock_timeout").unwrap_or(60);
    let dpkg_options = m.get_str("dpkg_options").unwrap_or_default().to_string();
    let a = Apt {
        check: m.check_mode(),
        diff: m.diff_mode(),
        dpkg_options: format!(
            "{} -o DPkg::Lock::Timeout={lock_timeout}",
            expand_dpkg_options(&dpkg_options)
        ),
        force: m.get_bool("force"),
        purge: m.get_bool("purge"),
        autoremove: m.get_bool("autoremove"),
        default_release: m.get_str("default_release").map(str::to_string),
    };
    let packages_given = m.get_str_list("package");
    let has_packages = m.get("package").is_some_and(|p| !p.is_null()) && !packages_given.is_empty();

    if m.get_bool("clean") {
        let (out, err, diff) = a.aptclean()?;
        if !has_packages && m.get("deb").is_none_or(Value::is_null) {
            return Ok(json_map!({
                "changed": true, "msg": out, "stdout": out, "stderr": err, "diff": diff
            }));
        }
    }

    let (mtime, mut cache_time) = cache_mtime();
    let mut cache_updated = false;
    let valid = m.get_int("cache_valid_time").unwrap_or(0);
    if m.get("update_cache").and_then(Value::as_bool) == Some(true) || valid != 0 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        if mtime + (valid as f64) < now {
            a.update_cache(m)?;
            let (_, after) = cache_mtime();
            cache_updated = a.check || after != cache_time;
            cache_time = after;
        }
        if !has_packages && m.get("deb").is_none_or(Value::is_null) {
            return Ok(json_map!({
                "changed": cache_updated,
                "cache_updated": cache_updated,
                "cache_update_time": cache_time,
            }));
        }
    }

    if let Some(deb) = m.get_str("deb") {
        if m.get_str("state") != Some("present") {
            return Err(Fail::new("deb only supports state=present"));
        }
        return a.install_deb(deb, &dpkg_options, m.get_bool("allow_downgrade"));
    }

    let packages: Vec<String> = packages_given
        .iter()
        .filter(|p| *p != "*")
        .map(|p| p.trim().to_string())
        .collect();
    for p in &packages {
        if p.matches('=').count() > 1 {
            return Err(Fail::new(format!("invalid package spec: {p}")));
        }
    }
    if packages.is_empty() {
        if m.get_bool("autoclean") {
            return a.cleanup("autoclean");
        }
        if a.autoremove {
            return a.cleanup("autoremove");
        }
    }

    let state = m.get_str("state").unwrap_or("present");
    if state == "absent" {
        return a.remove(&packages, m.get_bool("allow_change_held_packages"));
    }
    let options = InstallOptions {
        upgrade: state == "latest",
        install_recommends: m.get("install_recommends").and_then(Value::as_bool),
        fail_on_autoremove: m.get_bool("fail_on_autoremove"),
        only_upgrade: m.get_bool("only_upgrade"),
        allow_unauthenticated: m.get_bool("allow_unauthenticated"),
        allow_downgrade: m.get_bool("allow_downgrade"),
        allow_change_held_packages: m.get_bool("allow_change_held_packages"),
    };
    let (success, mut data) = a.install(&packages, &options)?;
    data.insert("cache_updated".into(), json!(cache_updated));
    data.insert("cache_update_time".into(), json!(cache_time));
    if success {
        Ok(data)
    } else {
        let msg = data
            .shift_remove("msg")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        Err(data
            .into_iter()
            .fold(Fail::new(msg), |f, (k, v)| f.with(k, v)))
    }
}

/// Options this module does not carry out, refused by name.
fn refuse_what_is_not_done(m: &Module) -> Result<(), Fail> {
    let state = m.get_str("state").unwrap_or("present");
    let refused: [(String, bool, &str); 5] = [
        (
            format!("state={state}"),
            matches!(state, "build-dep" | "fixed"),
            "only present, latest and absent are carried out",
        ),
        (
            format!("upgrade={}", m.get_str("upgrade").unwrap_or("no")),
            m.get_str("upgrade").is_some_and(|u| u != "no"),
            "whole-system upgrades are not carried out yet",
        ),
        (
            "policy_rc_d".into(),
            m.get("policy_rc_d").is_some_and(|v| !v.is_null()),
            "writing /usr/sbin/policy-rc.d is not granted to this module",
        ),
        (
            "deb with a URL".into(),
            m.get_str("deb").is_some_and(|d| d.contains("://")),
            "downloading the package is not granted to this module; download it with get_url first",
        ),
        (
            "name='*' with state=latest".into(),
            state == "latest" && m.get_str_list("package").iter().any(|p| p == "*"),
            "whole-system upgrades are not carried out yet",
        ),
    ];
    match refused.iter().find(|(_, given, _)| *given) {
        Some((what, _, why)) => Err(Fail::not_carried_out(format!(
            "The apt module does not support {what} in sandball: {why}."
        ))),
        None => Ok(()),
    }
}

/// `force-confdef,force-confold` as apt-get options.
fn expand_dpkg_options(compressed: &str) -> String {
    compressed
        .split(',')
        .map(|o| format!("-o \"Dpkg::Options::=--{o}\""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// When the package lists were last updated (the update stamp, else the lists
/// directory; 0 when neither exists): the time and its whole seconds.
fn cache_mtime() -> (f64, i64) {
    let mtime = [UPDATE_STAMP, LISTS]
        .iter()
        .find_map(|p| host::stat(p, true).ok().flatten())
        .map(|st| st.mtime)
        .unwrap_or(0.0);
    (mtime, mtime.floor() as i64)
}

/// Python's `str.splitlines` of apt-get's output, between the marker lines the
/// module looks for.
fn parse_diff(output: &str) -> Value {
    let lines = sandball_pycompat::pyops::splitlines(output);
    let start = lines
        .iter()
        .position(|l| *l == "Resolving dependencies...")
        .or_else(|| {
            lines
                .iter()
                .position(|l| *l == "Reading state information...")
        })
        .map_or(0, |i| i + 1);
    let end = lines
        .iter()
        .position(|l| upgraded_line(l))
        .map_or(lines.len(), |i| i + 1);
    let shown = lines.get(start..end.max(start)).unwrap_or_default();
    json!({"prepared": shown.join("\n")})
}

/// `N upgraded` or `N packages upgraded` at the start of a line.
fn upgraded_line(line: &str) -> bool {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && {
        let rest = &line[digits..];
        rest.starts_with(" upgraded") || rest.starts_with(" packages upgraded")
    }
}

/// `name`, `name=version` or `name>=version`: the name, the comparison, the version.
fn package_split(spec: &str) -> (String, Option<&'static str>, Option<String>) {
    let at = spec.find('=');
    match at {
        Some(i) if i > 0 && spec.as_bytes()[i - 1] == b'>' => (
            spec[..i - 1].to_string(),
            Some(">="),
            Some(spec[i + 1..].to_string()),
        ),
        Some(i) => (
            spec[..i].to_string(),
            Some("="),
            Some(spec[i + 1..].to_string()),
        ),
        None => (spec.to_string(), None, None),
    }
}

struct InstallOptions {
    upgrade: bool,
    install_recommends: Option<bool>,
    fail_on_autoremove: bool,
    only_upgrade: bool,
    allow_unauthenticated: bool,
    allow_downgrade: bool,
    allow_change_held_packages: bool,
}

/// The task's settings that every apt-get run shares.
struct Apt {
    check: bool,
    diff: bool,
    /// `-o "Dpkg::Options::=--…"` words and the lock timeout.
    dpkg_options: String,
    force: bool,
    purge: bool,
    autoremove: bool,
    default_release: Option<String>,
}

impl Apt {
    /// Runs a command line given as text (split as the module's `run_command` splits
    /// a string).
    fn run_line(&self, line: &str) -> Result<Ran, Fail> {
        let argv = shlex::split(line)
            .map_err(|e| Fail::new(format!("cannot split the command line {line:?}: {e}")))?;
        run_command(&argv, None, APT_ENV)
    }

    fn diff_of(&self, out: &str) -> Value {
        if self.diff {
            parse_diff(out)
        } else {
            json!({})
        }
    }

    fn flag(on: bool, word: &str) -> &str {
        if on { word } else { "" }
    }

    /// `apt-get update`, tried `update_cache_retries` times with a growing pause.
    fn update_cache(&self, m: &mut Module) -> Result<(), Fail> {
        if self.check {
            return Ok(());
        }
        let retries = m.get_int("update_cache_retries").unwrap_or(5).max(0);
        let max_delay = m.get_int("update_cache_retry_max_delay").unwrap_or(12) as f64;
        let randomize = f64::from(random_below(1000)) / 1000.0;
        let mut error = String::new();
        for retry in 0..retries {
            let ran = self.run_line(&format!("{APT_GET} update"))?;
            if ran.rc == 0 {
                return Ok(());
            }
            error = ran.stderr.trim().to_string();
            m.warn(format!(
                "Failed to update cache after {} retries due to {error}, retrying",
                retry + 1
            ));
            let mut delay = 2f64.powi(retry as i32) + randomize;
            if delay > max_delay {
                delay = max_delay + randomize;
            }
            std::thread::sleep(Duration::from_secs_f64(delay));
            m.warn(format!(
                "Sleeping for {} seconds, before attempting to refresh the cache again",
                delay.round() as i64
            ));
        }
        let reason = if error.is_empty() {
            "unknown reason".to_string()
        } else {
            error
        };
        Err(Fail::new(format!(
            "Failed to update apt cache after {retries} retries: {reason}"
        )))
    }

    fn policy(&self) -> Policy {
        Policy::new(self.default_release.clone())
    }

    /// Installs what is missing (and, for `latest`, what is out of date): the
    /// outcome and the result (or the failure's fields).
    fn install(
        &self,
        specs: &[String],
        o: &InstallOptions,
    ) -> Result<(bool, Map<String, Value>), Fail> {
        let policy = self.policy();
        let specs = policy.expand_patterns(specs)?;
        let mut words = Vec::new();
        let mut names = Vec::new();
        for spec in &specs {
            let (name, cmp, version) = package_split(spec);
            names.push(name.clone());
            let st = policy.status(&name, cmp, version.as_deref(), true)?;
            if !st.installed && o.only_upgrade {
                continue;
            }
            if !st.version_installed && st.installable.is_none() {
                return Ok((
                    false,
                    json_map!({"msg": format!("no available installation candidate for {spec}")}),
                ));
            }
            match (&st.installable, &version) {
                (Some(v), _)
                    if (!st.installed && !o.only_upgrade) || o.upgrade || !st.version_installed =>
                {
                    words.push(match (v, &version) {
                        (policy::Installable::Version(v), _) => format!("'{name}={v}'"),
                        (policy::Installable::Any, Some(ver)) => format!("'{name}={ver}'"),
                        (policy::Installable::Any, None) => format!("'{name}'"),
                    });
                }
                (Some(_), Some(ver)) if st.version_installed && cmp == Some("=") => {
                    words.push(format!("'{name}={ver}'"));
                }
                _ => {}
            }
        }
        let data = if words.is_empty() {
            json_map!({"changed": false})
        } else {
            let mut cmd = format!(
                "{APT_GET} -y {} {} {} {} {} {} {} install {}",
                self.dpkg_options,
                Self::flag(o.only_upgrade, "--only-upgrade"),
                "",
                Self::flag(self.force, "--force-yes"),
                Self::flag(self.autoremove, "--auto-remove"),
                Self::flag(o.fail_on_autoremove, "--no-remove"),
                Self::flag(self.check, "--simulate"),
                words.join(" ")
            );
            if let Some(release) = &self.default_release {
                cmd.push_str(&format!(" -t '{release}'"));
            }
            match o.install_recommends {
                Some(false) => cmd.push_str(" -o APT::Install-Recommends=no"),
                Some(true) => cmd.push_str(" -o APT::Install-Recommends=yes"),
                None => {}
            }
            if o.allow_unauthenticated {
                cmd.push_str(" --allow-unauthenticated");
            }
            if o.allow_downgrade {
                cmd.push_str(" --allow-downgrades");
            }
            if o.allow_change_held_packages {
                cmd.push_str(" --allow-change-held-packages");
            }
            let ran = self.run_line(&cmd)?;
            if ran.rc != 0 {
                return Ok((
                    false,
                    json_map!({
                        "msg": format!("'{cmd}' failed: {}", ran.stderr),
                        "stdout": ran.stdout, "stderr": ran.stderr, "rc": ran.rc,
                    }),
                ));
            }
            let diff = self.diff_of(&ran.stdout);
            json_map!({"changed": true, "stdout": ran.stdout, "stderr": ran.stderr, "diff": diff})
        };
        if !self.check {
            self.mark_installed_manually(&names)?;
        }
        Ok((true, data))
    }

    /// `apt-mark manual` (or, for an old apt-mark, `unmarkauto`) on what was asked for.
    fn mark_installed_manually(&self, names: &[String]) -> Result<(), Fail> {
        if names.is_empty() {
            return Ok(());
        }
        let mut cmd = format!("{APT_MARK} manual {}", names.join(" "));
        let mut ran = self.run_line(&cmd)?;
        if ran.stderr.contains("Invalid operation")
            || ran
                .stderr
                .contains("Usage: apt-mark [options] {markauto|unmarkauto} packages")
        {
            cmd = format!("{APT_MARK} unmarkauto {}", names.join(" "));
            ran = self.run_line(&cmd)?;
        }
        if ran.rc != 0 {
            return Err(Fail::new(format!("'{cmd}' failed: {}", ran.stderr))
                .with("stdout", ran.stdout)
                .with("stderr", ran.stderr)
                .with("rc", ran.rc));
        }
        Ok(())
    }

    /// Removes (or purges) what is installed of `specs`.
    fn remove(&self, specs: &[String], allow_held: bool) -> Result<Map<String, Value>, Fail> {
        let policy = self.policy();
        let specs = policy.expand_patterns(specs)?;
        let mut words = Vec::new();
        for spec in &specs {
            let (name, cmp, version) = package_split(spec);
            let st: Status = policy.status(&name, cmp, version.as_deref(), false)?;
            if st.version_installed || (st.has_files && self.purge) {
                words.push(format!("'{spec}'"));
            }
        }
        if words.is_empty() {
            return Ok(json_map!({"changed": false}));
        }
        let packages = words.join(" ");
        let cmd = format!(
            "{APT_GET} -q -y {} {} {} {} {} {} remove {packages}",
            self.dpkg_options,
            Self::flag(self.purge, "--purge"),
            Self::flag(self.force, "--force-yes"),
            Self::flag(self.autoremove, "--auto-remove"),
            Self::flag(self.check, "--simulate"),
            Self::flag(allow_held, "--allow-change-held-packages"),
        );
        let ran = self.run_line(&cmd)?;
        if ran.rc != 0 {
            return Err(Fail::new(format!(
                "'apt-get remove {packages}' failed: {}",
                ran.stderr
            ))
            .with("stdout", ran.stdout)
            .with("stderr", ran.stderr)
            .with("rc", ran.rc));
        }
        let diff = self.diff_of(&ran.stdout);
        Ok(json_map!({"changed": true, "stdout": ran.stdout, "stderr": ran.stderr, "diff": diff}))
    }

    /// `apt-get autoremove` or `autoclean`; changed when apt-get said it acted.
    fn cleanup(&self, operation: &str) -> Result<Map<String, Value>, Fail> {
        let cmd = format!(
            "{APT_GET} -y {} {} {} {operation} {}",
            self.dpkg_options,
            Self::flag(self.purge, "--purge"),
            Self::flag(self.force, "--force-yes"),
            Self::flag(self.check, "--simulate"),
        );
        let ran = self.run_line(&cmd)?;
        if ran.rc != 0 {
            return Err(
                Fail::new(format!("'apt-get {operation}' failed: {}", ran.stderr))
                    .with("stdout", ran.stdout)
                    .with("stderr", ran.stderr)
                    .with("rc", ran.rc),
            );
        }
        let marker = if operation == "autoremove" {
            "The following packages will be REMOVED"
        } else {
            "Del "
        };
        let diff = self.diff_of(&ran.stdout);
        Ok(json_map!({
            "changed": ran.stdout.contains(marker),
            "stdout": ran.stdout, "stderr": ran.stderr, "diff": diff,
        }))
    }

    /// Why a package of architecture `arch` cannot be installed here (none when it
    /// can: `all`, the node's, or one dpkg was told to add).
    fn foreign_architecture(&self, arch: &str) -> Result<Option<String>, Fail> {
        if arch.is_empty() {
            return Ok(Some("No Architecture field in the package".into()));
        }
        if arch == "all" {
            return Ok(None);
        }
        let native = self.run_line(&format!("{DPKG} --print-architecture"))?;
        let foreign = self.run_line(&format!("{DPKG} --print-foreign-architectures"))?;
        let known = std::iter::once(native.stdout.trim())
            .chain(foreign.stdout.lines().map(str::trim))
            .any(|a| a == arch);
        Ok((!known).then(|| {
            format!(
                "Wrong architecture '{arch}' -- Run dpkg --add-architecture to add it and update afterwards"
            )
        }))
    }

    /// `apt-get clean`: its output and diff.
    fn aptclean(&self) -> Result<(String, String, Value), Fail> {
        let ran = run_command(&[APT_GET.into(), "clean".into()], None, APT_ENV)?;
        let diff = self.diff_of(&ran.stdout);
        if ran.rc != 0 {
            return Err(Fail::new("apt-get clean failed")
                .with("stdout", ran.stdout)
                .with("rc", ran.rc));
        }
        Ok((ran.stdout, ran.stderr, diff))
    }

    /// Installs local .deb files with dpkg, unless the same version is installed;
    /// one of another architecture than the node's, or older than the version
    /// installed (unless `allow_downgrade`), is refused as python3-apt refuses it
    /// (`force` overrides). Their dependencies must be installed already: dpkg
    /// refuses otherwise, and the task fails with its words (ansible-core installs
    /// them with apt-get first).
    fn install_deb(
        &self,
        debs: &str,
        dpkg_options: &str,
        allow_downgrade: bool,
    ) -> Result<Map<String, Value>, Fail> {
        let policy = self.policy();
        let mut to_install = Vec::new();
        for deb in debs.split(',') {
            let field = |name: &str| -> Result<String, Fail> {
                let cmd = format!("{DPKG} --field {deb} {name}");
                let ran = self.run_line(&cmd)?;
                if ran.rc != 0 {
                    return Err(Fail::new(format!("{cmd} failed"))
                        .with("stdout", ran.stdout)
                        .with("stderr", ran.stderr));
                }
                Ok(ran.stdout.trim_matches('\n').to_string())
            };
            let name = field("Package")?;
            let wanted = field("Version")?;
            let installed = policy.installed_version(&name)?;
            if installed
                .as_ref()
                .is_some_and(|v| version::compare(v, &wanted).is_eq())
            {
                continue;
            }
            let problem = match self.foreign_architecture(&field("Architecture")?)? {
                Some(problem) => Some(problem),
                None if installed
                    .as_ref()
                    .is_some_and(|v| version::compare(&wanted, v).is_lt()) =>
                {
                    Some("A later version is already installed".to_string())
                }
                None => None,
            };
            if let Some(problem) = problem
                && !(self.force || (problem.contains("later version") && allow_downgrade))
            {
                return Err(Fail::new(problem));
            }
            to_install.push(deb.to_string());
        }
        if to_install.is_empty() {
            return Ok(json_map!({"changed": false, "stdout": "", "stderr": "", "diff": ""}));
        }
        let mut options = dpkg_options
            .split(',')
            .map(|o| format!("--{o}"))
            .collect::<Vec<_>>()
            .join(" ");
        if self.check {
            options.push_str(" --simulate");
        }
        if self.force {
            options.push_str(" --force-all");
        }
        let cmd = format!("dpkg {options} -i {}", to_install.join(" "));
        let ran = self.run_line(&cmd)?;
        let diff = parse_diff(&ran.stdout);
        if ran.rc != 0 {
            return Err(Fail::new(format!("{cmd} failed"))
                .with("stdout", ran.stdout)
                .with("stderr", ran.stderr));
        }
        Ok(json_map!({"changed": true, "stdout": ran.stdout, "stderr": ran.stderr, "diff": diff}))
    }
}

/// A random number below `n` (for the retry pause's jitter).
fn random_below(n: u32) -> u32 {
    (sandball_guest_sdk::files::random_u64() % u64::from(n)) as u32
}
