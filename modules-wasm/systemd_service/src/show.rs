//! `systemctl show` output read as the module reads it: `Key=value` lines, a value
//! spanning lines only for `Exec*` keys whose value opens with `{` (until a line
//! ending with `}`), every value stripped.

use sandball_guest_sdk::{Map, Value};

/// The properties `systemctl show` printed.
pub fn parse_systemctl_show(text: &str) -> Map<String, Value> {
    let mut parsed = Map::new();
    let mut pending: Option<(String, Vec<&str>)> = None;
    for line in text.split('\n') {
        if let Some((key, mut lines)) = pending.take() {
            lines.push(line);
            if line.trim_end().ends_with('}') {
                parsed.insert(key, Value::String(lines.join("\n").trim().to_string()));
            } else {
                pending = Some((key, lines));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.starts_with("Exec")
            && value.trim_start().starts_with('{')
            && !value.trim_end().ends_with('}')
        {
            pending = Some((key.to_string(), vec![value]));
            continue;
        }
        parsed.insert(key.to_string(), Value::String(value.trim().to_string()));
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::parse_systemctl_show;
    use sandball_guest_sdk::json;

    /// Properties in the shape systemd 252 prints them for a service (written for
    /// this test, no systemd runs here; ansible-core's parser reads the same 15
    /// values from it): one-line values, an `Exec*` value on one
    /// line and one over three, a description that opens a brace it never closes.
    const SHOWN: &str = concat!(
        "Type=notify\n",
        "Restart=on-failure\n",
        "MainPID=612\n",
        "ExecMainStartTimestamp=Thu 2026-11-26 08:00:01 UTC\n",
        "ExecReload={ path=/bin/kill ; argv[]=/bin/kill -HUP $MAINPID ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n",
        "ExecStart={ path=/usr/sbin/sshd ; argv[]=/usr/sbin/sshd -D ;\n",
        " ignore_errors=no ; start_time=[Thu 2026-11-26 08:00:01 UTC] ;\n",
        " pid=612 ; code=(null) ; status=0/0 }\n",
        "Description={ a description with an open brace\n",
        "Id=ssh.service\n",
        "Names=ssh.service sshd.service\n",
        "LoadState=loaded\n",
        "ActiveState=active\n",
        "SubState=running\n",
        "UnitFileState=enabled\n",
        "Environment=A=1 B=2\n",
        "StatusText=  Server listening on 0.0.0.0 port 22.  \n",
    );

    #[test]
    fn reads_properties_and_multi_line_exec_values() {
        let p = parse_systemctl_show(SHOWN);
        assert_eq!(p["ActiveState"], json!("active"));
        assert_eq!(p["LoadState"], json!("loaded"));
        assert_eq!(p["MainPID"], json!("612"));
        assert_eq!(p["Names"], json!("ssh.service sshd.service"));
        assert_eq!(p["Environment"], json!("A=1 B=2"));
        assert_eq!(
            p["StatusText"],
            json!("Server listening on 0.0.0.0 port 22.")
        );
        assert_eq!(
            p["ExecStart"],
            json!(
                "{ path=/usr/sbin/sshd ; argv[]=/usr/sbin/sshd -D ;\n ignore_errors=no ; start_time=[Thu 2026-11-26 08:00:01 UTC] ;\n pid=612 ; code=(null) ; status=0/0 }"
            )
        );
        assert!(p["ExecReload"].as_str().unwrap().ends_with("status=0/0 }"));
        assert_eq!(
            p["ExecMainStartTimestamp"],
            json!("Thu 2026-11-26 08:00:01 UTC")
        );
        // Only Exec* values span lines: the description does not swallow the rest.
        assert_eq!(
            p["Description"],
            json!("{ a description with an open brace")
        );
        assert_eq!(p["Id"], json!("ssh.service"));
        assert_eq!(p.len(), 15);
    }

    #[test]
    fn lines_without_a_key_are_skipped_and_nothing_is_nothing() {
        assert!(parse_systemctl_show("").is_empty());
        let p = parse_systemctl_show("no equals here\nA=\nB==x\n");
        assert_eq!((p["A"].clone(), p["B"].clone()), (json!(""), json!("=x")));
        assert_eq!(p.len(), 2);
    }
}
