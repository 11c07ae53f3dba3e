//! `loop_control` as ansible-playbook has it: `extended` (`ansible_loop`, with or
//! without `allitems`), `break_when` (seeing the item's registered result), a templated
//! `loop_var`, `index_var`, `pause` between items; what one item sets (`set_fact`) seen
//! by the next; a loop that cannot be templated skipped under a false `when`;
//! `ansible_search_path`; a `label` that sees the item's registered result (and fails
//! the item when it cannot be templated); an ignored failing loop shown by its items.

use sandball_e2e::Sandbox;

const PLAY: &str = include_str!("loop_control.yml");

#[test]
fn loop_control_works_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"2/3 False False a c 1 3\"");
    out.assert_stdout_has("\"msg\": \"p 0\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in [
            "extended",
            "no allitems",
            "break",
            "how many",
            "accumulate",
            "accumulated",
            "templated loop_var",
            "pause between items",
            "paused",
            "not a list",
            "undefined loop under a false when",
            "search path",
            "label sees the registered result",
            "label failure is kept",
            "an ignored failing loop",
        ] {
            assert_eq!(
                theirs.result_lines(task),
                out.result_lines(task),
                "{task}:\n{theirs}\n{out}"
            );
        }
    }
}
