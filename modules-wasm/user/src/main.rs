//! The `user` module (Linux, shadow-utils): makes sure an account exists, with the
//! uid, primary and supplementary groups, comment, home, shell, password hash, lock,
//! expiry and password ageing asked for, or does not, with the results, check mode,
//! warnings and messages of Ansible's user module. It reads accounts through the
//! node's `getent` (the task's user, and the group list), changes them with
//! `useradd`, `usermod`, `userdel` and `chage` (only with the task's user name as
//! their last argument), asks `test -e` whether a home exists and makes a missing one
//! with `mkhomedir_helper`. SSH key generation, `local` (libuser) and the options of
//! other systems are refused by name.

#[cfg(test)]
mod module_tests;

use sandball_guest_sdk::accounts::{self, Gr, Pw, find};
use sandball_guest_sdk::civil::civil_from_days;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::{Ran, run_command};
use std::collections::BTreeSet;

sandball_guest_sdk::manifest!("../manifest.json");

const USERADD: &str = "/usr/sbin/useradd";
const USERMOD: &str = "/usr/sbin/usermod";
const USERDEL: &str = "/usr/sbin/userdel";
const CHAGE: &str = "/usr/bin/chage";
const MKHOMEDIR: &str = "/usr/sbin/mkhomedir_helper";
const TEST: &str = "/usr/bin/test";

/// Options sandball's module does not implement, and why.
const REFUSED: &[(&str, &str)] = &[
    (
        "generate_ssh_key",
        "SSH key generation is not supported by sandball's user module yet",
    ),
    (
        "local",
        "local: true is not supported by sandball's user module (it needs libuser's luseradd, lusermod and lgroupmod)",
    ),
    ("login_class", "login_class is for BSD systems, not Linux"),
    ("hidden", "hidden is for macOS, not Linux"),
    ("profile", "profile is for Solaris and illumos, not Linux"),
    (
        "authorization",
        "authorization is for Solaris and illumos, not Linux",
    ),
    ("role", "role is for Solaris and illumos, not Linux"),
];

fn main() {
    sandball_guest_sdk::run(MANIFEST, user);
}

/// The task, read once.
struct Task {
    name: String,
    uid: Option<i64>,
    non_unique: bool,
    seuser: Option<String>,
    group: Option<String>,
    /// `groups` joined with commas, as Ansible keeps it.
    groups: Option<String>,
    append: bool,
    comment: Option<String>,
    home: Option<String>,
    shell: Option<String>,
    password: Option<String>,
    update_always: bool,
    password_lock: Option<bool>,
    create_home: bool,
    move_home: bool,
    skeleton: Option<String>,
    umask: Option<String>,
    system: bool,
    force: bool,
    remove: bool,
    expires: Option<f64>,
    inactive: Option<i64>,
    uid_min: Option<i64>,
    uid_max: Option<i64>,
    expire_min: Option<i64>,
    expire_max: Option<i64>,
    expire_warn: Option<i64>,
    check: bool,
}

impl Task {
    fn read(m: &Module) -> Task {
        let text = |k: &str| m.get_str(k).map(str::to_string);
        let flag = |k: &str| m.get(k).and_then(Value::as_bool);
        Task {
            name: text("name").unwrap_or_default(),
            uid: m.get_int("uid"),
            non_unique: m.get_bool("non_unique"),
            seuser: text("seuser"),
            group: text("group"),
            groups: m
                .get_list("groups")
                .map(|_| m.get_str_list("groups").join(",")),
            append: m.get_bool("append"),
            comment: text("comment"),
            home: text("home"),
            shell: text("shell"),
            password: text("password"),
            update_always: m.get_str("update_password") != Some("on_create"),
            password_lock: flag("password_lock"),
            create_home: m.get_bool("create_home"),
            move_home: m.get_bool("move_home"),
            skeleton: text("skeleton"),
            umask: text("umask"),
            system: m.get_bool("system"),
            force: m.get_bool("force"),
            remove: m.get_bool("remove"),
            expires: m.get("expires").and_then(Value::as_f64),
            inactive: m.get_int("password_expire_account_disable"),
            uid_min: m.get_int("uid_min"),
            uid_max: m.get_int("uid_max"),
            expire_min: m.get_int("password_expire_min"),
            expire_max: m.get_int("password_expire_max"),
            expire_warn: m.get_int("password_expire_warn"),
            check: m.check_mode(),
        }
    }

    /// The passwd entry, with the shadow hash in place of a one-character password
    /// field (Ansible's `user_info`).
    fn info(&self) -> Result<Option<Pw>, Fail> {
        let Some(mut pw) = accounts::passwd(&self.name)? else {
            return Ok(None);
        };
        if pw.passwd.chars().count() <= 1 {
            pw.passwd = accounts::shadow(&self.name)?
                .map(|sp| sp.pwdp)
                .unwrap_or_default();
        }
        Ok(Some(pw))
    }

    /// Runs a command that changes the node; in check mode only says it would.
    fn execute(&self, argv: Vec<String>) -> Result<Ran, Fail> {
        if self.check {
            return Ok(Ran::default());
        }
        run_command(&argv, None, &[])
    }

    /// The `groups` as Ansible's `get_groups_set` reads them: each must exist; the
    /// user's primary group left out (`remove_existing`), or their names (`names`).
    fn groups_set(
        &self,
        all: &[Gr],
        primary: Option<u32>,
        names: bool,
    ) -> Result<BTreeSet<String>, Fail> {
        let mut out = BTreeSet::new();
        for spec in self.groups.as_deref().unwrap_or_default().split(',') {
            if spec.is_empty() {
                continue;
            }
            let spec = spec.trim();
            let Some(group) = find(all, spec) else {
                return Err(Fail::new(format!("Group {spec} does not exist")));
            };
            if names {
                out.insert(group.name.clone());
            } else if primary != Some(group.gid) {
                out.insert(spec.to_string());
            }
        }
        Ok(out)
    }

    /// useradd for a new user.
    fn create(&self) -> Result<Ran, Fail> {
        let all = accounts::groups()?;
        let mut cmd = vec![USERADD.to_string()];
        let mut add = |words: &[&str]| cmd.extend(words.iter().map(|w| w.to_string()));
        if let Some(uid) = self.uid {
            add(&["-u", &uid.to_string()]);
            if self.non_unique {
                add(&["-o"]);
            }
        }
        if let Some(seuser) = &self.seuser {
            add(&["-Z", seuser]);
        }
        if let Some(group) = &self.group {
            if find(&all, group).is_none() {
                return Err(Fail::new(format!("Group {group} does not exist")));
            }
            add(&["-g", group]);
        } else if find(&all, &self.name).is_some() {
            // A group of the user's name exists: no user group (USERGROUPS_ENAB).
            add(&["-N"]);
        }
        if self.groups.as_deref().is_some_and(|g| !g.is_empty()) {
            let groups: Vec<String> = self.groups_set(&all, None, false)?.into_iter().collect();
            add(&["-G", &groups.join(",")]);
        }
        if let Some(comment) = &self.comment {
            add(&["-c", comment]);
        }
        if let Some(home) = &self.home {
            if self.create_home {
                let parent = parent_dir(home);
                if !is_dir(&parent)? {
                    return Err(Fail::new(format!(
                        "the parent directory of home ({parent}) does not exist: sandball's user module does not create it (make it first, e.g. with the file module)"
                    )));
                }
            }
            add(&["-d", home]);
        }
        if let Some(shell) = &self.shell {
            add(&["-s", shell]);
        }
        if let Some(expires) = self.expires {
            add(&["-e", &expiry_date(expires)]);
        }
        if let Some(inactive) = self.inactive {
            add(&["-f", &inactive.to_string()]);
        }
        if let Some(password) = &self.password {
            let hash = match self.password_lock {
                Some(true) => format!("!{password}"),
                _ => password.clone(),
            };
            add(&["-p", &hash]);
        }
        if self.create_home {
            add(&["-m"]);
            if let Some(skeleton) = &self.skeleton {
                add(&["-k", skeleton]);
            }
            if let Some(umask) = &self.umask {
                add(&["-K", &format!("UMASK={umask}")]);
            }
        } else {
            add(&["-M"]);
        }
        if self.system {
            add(&["-r"]);
        }
        if let Some(n) = self.uid_min {
            add(&["-K", &format!("UID_MIN={n}")]);
        }
        if let Some(n) = self.uid_max {
            add(&["-K", &format!("UID_MAX={n}")]);
        }
        cmd.push(self.name.clone());
        self.execute(cmd)
    }

    /// usermod for an existing user: only what differs. `None` when nothing does.
    fn modify(&self, info: &Pw) -> Result<Option<Ran>, Fail> {
        let all = accounts::groups()?;
        let mut cmd: Vec<String> = vec![USERMOD.to_string()];
        let mut add = |words: &[&str]| cmd.extend(words.iter().map(|w| w.to_string()));
        if let Some(uid) = self.uid
            && i64::from(info.uid) != uid
        {
            add(&["-u", &uid.to_string()]);
            if self.non_unique {
                add(&["-o"]);
            }
        }
        if let Some(group) = &self.group {
            let Some(g) = find(&all, group) else {
                return Err(Fail::new(format!("Group {group} does not exist")));
            };
            if info.gid != g.gid {
                add(&["-g", &g.gid.to_string()]);
            }
        }
        if let Some(wanted) = &self.groups {
            let current: BTreeSet<String> = all
                .iter()
                .filter(|g| g.members.contains(&self.name))
                .map(|g| g.name.clone())
                .collect();
            let mut groups = BTreeSet::new();
            let need = if wanted.is_empty() {
                !current.is_empty() && !self.append
            } else {
                groups = self.groups_set(&all, Some(info.gid), true)?;
                let diff: BTreeSet<&String> = current.symmetric_difference(&groups).collect();
                if self.append {
                    let adds = groups.iter().any(|g| diff.contains(g));
                    if adds {
                        add(&["-a"]);
                    }
                    adds
                } else {
                    !diff.is_empty()
                }
            };
            if need {
                let list: Vec<String> = groups.into_iter().collect();
                add(&["-G", &list.join(",")]);
            }
        }
        if let Some(comment) = &self.comment
            && info.gecos != *comment
        {
            add(&["-c", comment]);
        }
        if let Some(home) = &self.home
            && info.dir != *home
        {
            add(&["-d", home]);
            if self.move_home {
                add(&["-m"]);
            }
        }
        if let Some(shell) = &self.shell
            && info.shell != *shell
        {
            add(&["-s", shell]);
        }
        if let Some(expires) = self.expires {
            let current = accounts::shadow(&self.name)?.map_or(0, |sp| sp.expire);
            let change = if expires < 0.0 {
                current >= 0
            } else {
                current < 0 || civil_from_days(current) != date_of(expires)
            };
            if change {
                add(&["-e", &expiry_date(expires)]);
            }
        }
        if let Some(inactive) = self.inactive {
            add(&["-f", &inactive.to_string()]);
        }
        let locked = info.passwd.starts_with('!');
        match self.password_lock {
            Some(true) if !locked => add(&["-L"]),
            Some(false) if locked => add(&["-U"]),
            _ => {}
        }
        if let Some(password) = &self.password
            && self.update_always
            && info.passwd.trim_start_matches('!') != password.trim_start_matches('!')
        {
            cmd.retain(|w| w != "-U" && w != "-L");
            cmd.push("-p".into());
            cmd.push(match self.password_lock {
                Some(true) => format!("!{password}"),
                _ => password.clone(),
            });
        }
        if cmd.len() == 1 {
            return Ok(None);
        }
        cmd.push(self.name.clone());
        self.execute(cmd).map(Some)
    }

    /// chage for the password ageing options that differ from the shadow entry.
    fn password_ageing(&self) -> Result<Option<Ran>, Fail> {
        let asked = [
            ("-m", self.expire_min),
            ("-M", self.expire_max),
            ("-W", self.expire_warn),
        ];
        if asked.iter().all(|(_, v)| v.is_none()) {
            return Ok(None);
        }
        let Some(sp) = accounts::shadow(&self.name)? else {
            return Ok(None);
        };
        let current = [sp.min, sp.max, sp.warn];
        let mut cmd = vec![CHAGE.to_string()];
        for ((flag, wanted), now) in asked.iter().zip(current) {
            if let Some(n) = wanted
                && *n != now
            {
                cmd.extend([flag.to_string(), n.to_string()]);
            }
        }
        if cmd.len() == 1 {
            return Ok(None);
        }
        cmd.push(self.name.clone());
        self.execute(cmd).map(Some)
    }
}

/// The directory holding `path`, as `os.path.dirname` gives it.
fn parent_dir(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => path[..i].trim_end_matches('/').to_string(),
        None => String::new(),
    }
}

/// Whether `test` says yes to `flag` (`-e`, `-d`) on an absolute path.
fn test(flag: &str, path: &str) -> Result<bool, Fail> {
    if !path.starts_with('/') {
        return Ok(false);
    }
    let argv = [TEST.to_string(), flag.to_string(), path.to_string()];
    Ok(run_command(&argv, None, &[])?.rc == 0)
}

fn is_dir(path: &str) -> Result<bool, Fail> {
    test("-d", path)
}

/// The UTC date of `seconds` since the epoch.
fn date_of(seconds: f64) -> (i64, u32, u32) {
    civil_from_days((seconds / 86400.0).floor() as i64)
}

/// useradd's and usermod's `-e` value: `YYYY-MM-DD`, or empty for a negative time.
fn expiry_date(seconds: f64) -> String {
    if seconds < 0.0 {
        return String::new();
    }
    let (y, m, d) = date_of(seconds);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Whether a password looks like something other than a crypt hash (Ansible warns).
fn looks_unhashed(password: &str) -> bool {
    if ["*", "!", "*************"].contains(&password) {
        return false;
    }
    if password.contains([':', '*', '!']) || !password.contains('$') {
        return true;
    }
    let fields: Vec<&str> = password.split('$').collect();
    if fields.len() < 3 {
        return true;
    }
    let last = fields[fields.len() - 1];
    let bad_chars = last
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || "./=".contains(c)));
    let want = match fields[1] {
        "1" => Some(22),
        "5" | "y" => Some(43),
        "6" => Some(86),
        _ => None,
    };
    bad_chars || want.is_some_and(|n| last.chars().count() != n)
}

/// Puts a program's outputs into the result, as Ansible does (when not empty).
fn outputs(result: &mut Map<String, Value>, ran: &Ran) {
    if !ran.stdout.is_empty() {
        result.insert("stdout".into(), json!(ran.stdout));
    }
    if !ran.stderr.is_empty() {
        result.insert("stderr".into(), json!(ran.stderr));
    }
}

/// A failed program, as Ansible reports it.
fn failed(name: &str, ran: &Ran) -> Fail {
    Fail::new(ran.stderr.clone())
        .with("name", name)
        .with("rc", ran.rc)
}

/// The module body.
fn user(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    for (option, why) in REFUSED {
        let set = match m.get(option) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => true,
        };
        if set {
            return Err(Fail::not_carried_out(format!("{option}: {why}")));
        }
    }
    let t = Task::read(m);
    if t.password.as_deref().is_some_and(looks_unhashed) {
        m.warn("The input password appears not to have been hashed. The 'password' argument must be encrypted for this module to work properly.");
    }
    if t.groups.is_none() && t.append {
        m.warn("'append' is set, but no 'groups' are specified. Use 'groups' for appending new groups.This will change to an error in Ansible 2.14.");
    }
    let state = m.get_str("state").unwrap_or("present").to_string();
    let mut result = json_map!({"name": t.name, "state": state});
    let mut ran: Option<Ran> = None;
    if state == "absent" {
        if accounts::passwd(&t.name)?.is_some() {
            if t.check {
                return Ok(json_map!({"changed": true}));
            }
            let mut cmd = vec![USERDEL.to_string()];
            if t.force {
                cmd.push("-f".into());
            }
            if t.remove {
                cmd.push("-r".into());
            }
            cmd.push(t.name.clone());
            let done = run_command(&cmd, None, &[])?;
            if done.rc != 0 {
                return Err(failed(&t.name, &done));
            }
            result.insert("force".into(), json!(t.force));
            result.insert("remove".into(), json!(t.remove));
            ran = Some(done);
        }
    } else {
        match t.info()? {
            None => {
                if t.check {
                    return Ok(json_map!({"changed": true}));
                }
                ran = Some(t.create()?);
                result.insert("system".into(), json!(t.system));
                result.insert("create_home".into(), json!(t.create_home));
            }
            Some(info) => {
                ran = t.modify(&info)?;
                result.insert("append".into(), json!(t.append));
                result.insert("move_home".into(), json!(t.move_home));
            }
        }
        if let Some(done) = &ran
            && done.rc != 0
        {
            return Err(failed(&t.name, done));
        }
        if t.password.is_some() {
            result.insert("password".into(), json!("NOT_LOGGING_PASSWORD"));
        }
    }
    result.insert("changed".into(), json!(ran.is_some()));
    if let Some(done) = &ran {
        outputs(&mut result, done);
    }
    if state == "present"
        && let Some(info) = t.info()?
    {
        result.insert("uid".into(), json!(info.uid));
        result.insert("group".into(), json!(info.gid));
        result.insert("comment".into(), json!(info.gecos));
        result.insert("home".into(), json!(info.dir));
        result.insert("shell".into(), json!(info.shell));
        if let Some(groups) = &t.groups {
            result.insert("groups".into(), json!(groups));
        }
        let home = t.home.clone().unwrap_or_else(|| info.dir.clone());
        if t.create_home && !test("-e", &home)? {
            if !t.check {
                make_home(&t, &home)?;
            }
            result.insert("changed".into(), json!(true));
        }
        if let Some(done) = t.password_ageing()? {
            if done.rc != 0 {
                return Err(failed(&t.name, &done));
            }
            result.insert("changed".into(), json!(true));
        }
    }
    Ok(result)
}

/// Makes a missing home directory from the skeleton, owned by the user, with the
/// node's `mkhomedir_helper` (which makes the user's home as the passwd entry says).
fn make_home(t: &Task, home: &str) -> Result<(), Fail> {
    let mut cmd = vec![MKHOMEDIR.to_string(), t.name.clone()];
    if let Some(skeleton) = &t.skeleton {
        cmd.extend(["0022".to_string(), skeleton.clone()]);
    }
    let ran = run_command(&cmd, None, &[])?;
    if ran.rc != 0 {
        return Err(Fail::new(format!(
            "cannot create the home directory {home}: {}",
            ran.stderr.trim_end()
        )));
    }
    Ok(())
}
