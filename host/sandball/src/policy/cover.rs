//! How concrete capabilities compare: whether one covers another (a policy's
//! `allow` covering what a task adds), narrowing a grant to a list (`only:`), and
//! taking denied capabilities out of a grant.

use sandball_wire::capability::{
    CapabilityRequest as Cap, ExecGrant, FsGrant, FsOps, Grant, NetHost, NetPattern, glob,
};
use std::net::SocketAddr;

/// Whether `outer` allows everything `inner` does.
pub fn covers(outer: &Cap, inner: &Cap) -> bool {
    match (outer, inner) {
        (Cap::Fs(o), Cap::Fs(i)) => o.ops.covers(i.ops) && o.path_covers(i),
        (Cap::Exec(o), Cap::Exec(i)) => {
            glob(&o.program, &i.program)
                && match (&o.args, &i.args) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(p), Some(q)) => p == q || o.allows_args(q),
                }
        }
        (Cap::Env { name: o }, Cap::Env { name: i }) => glob(o, i),
        (Cap::Net { address: o, .. }, Cap::Net { address: i, .. }) => {
            glob(o, i) || net_covers(o, i)
        }
        (Cap::Dns, Cap::Dns) => true,
        _ => false,
    }
}

/// A pattern covers one peer (`ADDRESS:PORT`) it matches.
fn net_covers(outer: &str, inner: &str) -> bool {
    let (Ok(o), Ok(i)) = (NetPattern::parse(outer), NetPattern::parse(inner)) else {
        return false;
    };
    match i.host {
        NetHost::Ip(ip) if i.ports.0 == i.ports.1 => o.matches(SocketAddr::new(ip, i.ports.0), &[]),
        _ => false,
    }
}

/// `ops` without those of `minus`.
fn ops_without(ops: FsOps, minus: FsOps) -> FsOps {
    FsOps {
        read: ops.read && !minus.read,
        write: ops.write && !minus.write,
        create: ops.create && !minus.create,
        remove: ops.remove && !minus.remove,
    }
}

/// A grant made of these concrete capabilities, keeping `limits`.
fn rebuild(caps: Vec<Cap>, limits: sandball_wire::capability::Limits) -> Grant {
    let mut g = Grant {
        limits,
        ..Grant::default()
    };
    for cap in caps {
        match cap {
            Cap::Fs(f) => {
                if !f.ops.is_empty() && !g.fs.contains(&f) {
                    g.fs.push(f)
                }
            }
            Cap::Exec(e) => {
                if !g.exec.contains(&e) {
                    g.exec.push(e)
                }
            }
            Cap::Env { name } => {
                if !g.env.contains(&name) {
                    g.env.push(name)
                }
            }
            Cap::Net { address, .. } => {
                if !g.net.contains(&address) {
                    g.net.push(address)
                }
            }
            Cap::Dns => g.dns = true,
        }
    }
    g
}

/// The grant narrowed to `only`: what both allow. An entry `only` covers stays (a
/// path keeps the operations both allow); an entry of `only` the grant covers
/// replaces the wider one.
pub fn narrow(grant: &Grant, only: &[Cap]) -> Grant {
    let mut kept = Vec::new();
    for g in grant.to_requests() {
        for o in only {
            match (&g, o) {
                (Cap::Fs(gf), Cap::Fs(of)) => {
                    let ops = gf.ops.intersect(of.ops);
                    if of.path_covers(gf) {
                        kept.push(Cap::Fs(FsGrant { ops, ..gf.clone() }));
                    } else if gf.path_covers(of) {
                        kept.push(Cap::Fs(FsGrant { ops, ..of.clone() }));
                    }
                }
                _ if covers(o, &g) => kept.push(g.clone()),
                _ if covers(&g, o) => kept.push(o.clone()),
                _ => {}
            }
        }
    }
    rebuild(kept, grant.limits)
}

/// Why a denial cannot be applied: it lies inside a wider grant, which WASI cannot
/// open with a hole in it.
#[derive(Debug)]
pub struct Carve {
    /// The granted capability.
    pub granted: Cap,
    /// The denied one inside it.
    pub denied: Cap,
}

/// The grant without what `deny` lists: covered entries go (a path loses the denied
/// operations). A denied capability strictly inside a granted one is an error.
pub fn subtract(grant: &Grant, deny: &[Cap]) -> Result<Grant, Box<Carve>> {
    let mut kept = Vec::new();
    for g in grant.to_requests() {
        let mut g = g;
        let mut gone = false;
        for d in deny {
            match (&mut g, d) {
                (Cap::Fs(gf), Cap::Fs(df)) => {
                    if df.path_covers(gf) {
                        gf.ops = ops_without(gf.ops, df.ops);
                        gone = gf.ops.is_empty();
                    } else if gf.path_covers(df) && !gf.ops.intersect(df.ops).is_empty() {
                        return Err(Box::new(Carve {
                            granted: Cap::Fs(gf.clone()),
                            denied: d.clone(),
                        }));
                    }
                }
                (g, d) if covers(d, g) => gone = true,
                (g, d) if covers(g, d) => {
                    return Err(Box::new(Carve {
                        granted: g.clone(),
                        denied: d.clone(),
                    }));
                }
                _ => {}
            }
            if gone {
                break;
            }
        }
        if !gone {
            kept.push(g);
        }
    }
    Ok(rebuild(kept, grant.limits))
}

/// An exec capability for a program with any arguments.
pub fn exec(program: &str) -> Cap {
    Cap::Exec(ExecGrant {
        program: program.to_string(),
        args: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_wire::capability::{Access, FsScope};

    fn fs(path: &str, access: Access, scope: FsScope) -> Cap {
        Cap::Fs(FsGrant {
            path: path.into(),
            ops: access.into(),
            scope,
            create_parents: false,
            create_parents_if: None,
            fallback: None,
        })
    }

    #[test]
    fn trees_cover_what_is_below_them_and_globs_match() {
        let srv = fs("/srv", Access::ReadWrite, FsScope::Tree);
        assert!(covers(&srv, &fs("/srv/a/b", Access::Read, FsScope::Entry)));
        assert!(covers(&srv, &fs("/srv", Access::Read, FsScope::Tree)));
        assert!(!covers(&srv, &fs("/srvx", Access::Read, FsScope::Entry)));
        let read = fs("/srv", Access::Read, FsScope::Tree);
        assert!(!covers(
            &read,
            &fs("/srv/a", Access::ReadWrite, FsScope::Entry)
        ));
        let entry = fs("/srv/a", Access::ReadWrite, FsScope::Entry);
        assert!(!covers(&entry, &fs("/srv/a", Access::Read, FsScope::Tree)));
        assert!(covers(&exec("/usr/bin/*"), &exec("/usr/bin/ls")));
        assert!(!covers(&exec("/usr/bin/*"), &exec("/bin/sh")));
        let net = Cap::Net {
            address: "127.0.0.0/8:8000-9000".into(),
            url: None,
        };
        let peer = Cap::Net {
            address: "127.0.0.1:8080".into(),
            url: None,
        };
        assert!(covers(&net, &peer));
        assert!(!covers(&peer, &net));
        assert!(covers(&Cap::Dns, &Cap::Dns));
        let with_args = Cap::Exec(ExecGrant {
            program: "systemctl".into(),
            args: Some(vec!["status".into(), "*".into()]),
        });
        let call = Cap::Exec(ExecGrant {
            program: "systemctl".into(),
            args: Some(vec!["status".into(), "nginx".into()]),
        });
        assert!(covers(&with_args, &call));
        assert!(!covers(&with_args, &exec("systemctl")));
    }

    #[test]
    fn narrowing_keeps_what_both_allow() {
        let grant = rebuild(
            vec![
                fs("/srv", Access::ReadWrite, FsScope::Tree),
                exec("/bin/ls"),
                exec("/bin/cat"),
                Cap::Dns,
            ],
            Default::default(),
        );
        let g = narrow(
            &grant,
            &[
                fs("/srv/data", Access::Read, FsScope::Tree),
                exec("/bin/ls"),
            ],
        );
        assert_eq!(g.fs.len(), 1);
        assert_eq!(g.fs[0].path, "/srv/data");
        assert_eq!(g.fs[0].ops, FsOps::READ);
        assert_eq!(g.exec.len(), 1);
        assert!(!g.dns);
        assert!(narrow(&grant, &[]).is_empty());
    }

    #[test]
    fn denials_take_out_covered_entries_and_refuse_holes() {
        let grant = rebuild(
            vec![
                fs("/srv/x", Access::ReadWrite, FsScope::Entry),
                exec("/bin/sh"),
                exec("/bin/ls"),
            ],
            Default::default(),
        );
        let g = subtract(
            &grant,
            &[
                exec("/bin/sh"),
                Cap::Fs(FsGrant {
                    path: "/srv".into(),
                    ops: FsOps::of(&[sandball_wire::capability::FsOp::Remove]),
                    scope: FsScope::Tree,
                    create_parents: false,
                    create_parents_if: None,
                    fallback: None,
                }),
            ],
        )
        .unwrap();
        assert_eq!(
            g.exec,
            vec![ExecGrant {
                program: "/bin/ls".into(),
                args: None
            }]
        );
        assert!(g.fs[0].ops.write && !g.fs[0].ops.remove);
        let wide = rebuild(
            vec![fs("/", Access::Read, FsScope::Tree)],
            Default::default(),
        );
        let e = subtract(&wide, &[fs("/etc/shadow", Access::Read, FsScope::Entry)]).unwrap_err();
        assert!(matches!(e.denied, Cap::Fs(_)));
    }
}
