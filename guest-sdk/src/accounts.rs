//! What the node's name services say about accounts, through its `getent` (as
//! Python's `pwd`, `spwd` and `grp` would): a user's password and shadow entries, a
//! group, and every group (for names, gids and members). A module granted
//! `/usr/bin/getent` with `passwd $name`, `shadow $name`, `group $name` or `group`
//! reads what it needs and nothing else.

use crate::fail::Fail;
use crate::program::run_command;

const GETENT: &str = "/usr/bin/getent";

/// One `passwd` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pw {
    /// The password field (`x` when the hash is in the shadow file).
    pub passwd: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// GECOS.
    pub gecos: String,
    /// Home directory.
    pub dir: String,
    /// Login shell.
    pub shell: String,
}

/// The fields of a `shadow` entry the module reads (`-1` where a number is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sp {
    /// The password hash (with `!` when locked).
    pub pwdp: String,
    /// Fewest days between changes.
    pub min: i64,
    /// Most days between changes.
    pub max: i64,
    /// Days of warning.
    pub warn: i64,
    /// Expiry, in days since the epoch.
    pub expire: i64,
}

/// One group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gr {
    /// Its name.
    pub name: String,
    /// Its id.
    pub gid: u32,
    /// Its members (not the users whose primary group it is).
    pub members: Vec<String>,
}

/// The colon-separated fields of the entry getent gives for `key`, or none.
fn entry(database: &str, key: &str) -> Result<Option<Vec<String>>, Fail> {
    let argv = [GETENT.to_string(), database.to_string(), key.to_string()];
    let ran = run_command(&argv, None, &[])?;
    match ran.rc {
        0 => Ok(ran
            .stdout
            .lines()
            .next()
            .map(|l| l.split(':').map(str::to_string).collect())),
        2 => Ok(None),
        rc => Err(Fail::new(format!(
            "getent {database} {key} failed (rc {rc}): {}",
            ran.stderr.trim_end()
        ))),
    }
}

/// The passwd entry of `name`.
pub fn passwd(name: &str) -> Result<Option<Pw>, Fail> {
    let Some(f) = entry("passwd", name)? else {
        return Ok(None);
    };
    let field = |i: usize| f.get(i).cloned().unwrap_or_default();
    let number = |i: usize| field(i).parse::<u32>().ok();
    match (number(2), number(3)) {
        (Some(uid), Some(gid)) => Ok(Some(Pw {
            passwd: field(1),
            uid,
            gid,
            gecos: field(4),
            dir: field(5),
            shell: field(6),
        })),
        _ => Err(Fail::new(format!(
            "the passwd entry of {name} does not parse: {}",
            f.join(":")
        ))),
    }
}

/// The shadow entry of `name`.
pub fn shadow(name: &str) -> Result<Option<Sp>, Fail> {
    Ok(entry("shadow", name)?.map(|f| {
        let number = |i: usize| f.get(i).and_then(|s| s.parse::<i64>().ok()).unwrap_or(-1);
        Sp {
            pwdp: f.get(1).cloned().unwrap_or_default(),
            min: number(3),
            max: number(4),
            warn: number(5),
            expire: number(7),
        }
    }))
}

/// The group entry of `name` (a name, not a gid).
pub fn group(name: &str) -> Result<Option<Gr>, Fail> {
    Ok(entry("group", name)?
        .and_then(|f| group_of(&f.iter().map(String::as_str).collect::<Vec<_>>())))
}

/// A group from its colon-separated fields.
fn group_of(f: &[&str]) -> Option<Gr> {
    let gid = f.get(2)?.parse().ok()?;
    let members = f
        .get(3)
        .filter(|m| !m.is_empty())
        .map(|m| m.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    Some(Gr {
        name: f.first()?.to_string(),
        gid,
        members,
    })
}

/// Every group the name services list.
pub fn groups() -> Result<Vec<Gr>, Fail> {
    let ran = run_command(&[GETENT.to_string(), "group".to_string()], None, &[])?;
    if ran.rc != 0 {
        return Err(Fail::new(format!(
            "getent group failed (rc {}): {}",
            ran.rc,
            ran.stderr.trim_end()
        )));
    }
    Ok(ran
        .stdout
        .lines()
        .filter_map(|line| group_of(&line.split(':').collect::<Vec<_>>()))
        .collect())
}

/// The group `spec` names: a gid first (as Python's `int()` reads it), else a name.
pub fn find<'a>(groups: &'a [Gr], spec: &str) -> Option<&'a Gr> {
    spec.trim()
        .parse::<u32>()
        .ok()
        .and_then(|gid| groups.iter().find(|g| g.gid == gid))
        .or_else(|| groups.iter().find(|g| g.name == spec))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn root_is_read_from_the_name_services() {
        let pw = passwd("root").unwrap().unwrap();
        assert_eq!((pw.uid, pw.gid, pw.dir.as_str()), (0, 0, "/root"));
        assert_eq!(group("root").unwrap().unwrap().gid, 0);
        let all = groups().unwrap();
        assert_eq!(find(&all, "0").map(|g| g.name.as_str()), Some("root"));
        assert_eq!(find(&all, "root").map(|g| g.gid), Some(0));
        assert_eq!(passwd("sbt_no_such_user").unwrap(), None);
        assert_eq!(group("sbt_no_such_group").unwrap(), None);
    }
}
