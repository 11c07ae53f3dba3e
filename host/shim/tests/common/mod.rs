//! Test components written in WAT: one core module that can print to stdout, echo
//! stdin, call `sandball:host/posix.chmod`, try to open a TCP socket, and whose `wasi:cli/run` body each test
//! chooses.

#![allow(dead_code)]

/// Prints "hello from wasm\n" and returns ok.
pub const HELLO: &str = "(call $print (i32.const 1024) (i32.const 16)) (i32.const 0)";
/// Copies stdin (up to 4 KiB) to stdout and returns ok.
pub const ECHO: &str = "(call $echo) (i32.const 0)";
/// Returns an error (exit code 1).
pub const FAIL: &str = "(i32.const 1)";
/// Traps.
pub const TRAP: &str = "(unreachable)";
/// Never ends.
pub const SPIN: &str = "(loop $l (br $l)) (i32.const 0)";
/// Grows memory by 1 MiB at a time until refused.
pub const GROW: &str =
    "(loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) (i32.const 0)";
/// Writes 1 KiB to stdout 64 times.
pub const FLOOD: &str = "(call $flood (i32.const 64)) (i32.const 0)";

/// Tries to create a TCP socket and prints `access-denied` when refused so.
pub const TCP: &str = "(call $tcp-create (i32.const 0) (i32.const 192))
    (if (i32.and (i32.eq (i32.load8_u (i32.const 192)) (i32.const 1))
                 (i32.eq (i32.load8_u (i32.const 196)) (i32.const 1)))
      (then (call $print (i32.const 1040) (i32.const 14)))
      (else (call $print (i32.const 1056) (i32.const 8))))
    (i32.const 0)";

/// A run body calling `posix.chmod(path, 0o644)` and printing the error message
/// when it fails.
pub fn chmod_body(path: &str) -> String {
    format!(
        "(call $chmod (i32.const 2048) (i32.const {len}) (i32.const 420) (i32.const 128))
         (if (i32.load8_u (i32.const 128))
           (then (call $print (i32.load (i32.const 140)) (i32.load (i32.const 144)))))
         (i32.const 0)",
        len = path.len()
    )
}

/// The WAT text of a component whose `run` does `body` (a core function body
/// returning i32: 0 ok, 1 error). `data` is placed at address 2048.
pub fn component_wat(body: &str, data: &str) -> String {
    format!(
        r#"
(component
  (type $error-inst (instance (export "error" (type (sub resource)))))
  (import "wasi:io/error@0.2.0" (instance $io-error (type $error-inst)))
  (alias export $io-error "error" (type $io-err))

  (type $streams-inst (instance
    (alias outer 1 $io-err (type $err))
    (export "error" (type $err-t (eq $err)))
    (type $own-err (own $err-t))
    (type $stream-error (variant (case "last-operation-failed" $own-err) (case "closed")))
    (export "stream-error" (type $se (eq $stream-error)))
    (export "output-stream" (type $os (sub resource)))
    (export "input-stream" (type $is (sub resource)))
    (type $borrow-os (borrow $os))
    (type $borrow-is (borrow $is))
    (type $write-result (result (error $se)))
    (type $read-result (result (list u8) (error $se)))
    (export "[method]output-stream.blocking-write-and-flush"
      (func (param "self" $borrow-os) (param "contents" (list u8)) (result $write-result)))
    (export "[method]input-stream.blocking-read"
      (func (param "self" $borrow-is) (param "len" u64) (result $read-result)))
  ))
  (import "wasi:io/streams@0.2.0" (instance $streams (type $streams-inst)))
  (alias export $streams "output-stream" (type $output-stream))
  (alias export $streams "input-stream" (type $input-stream))

  (type $stdout-inst (instance
    (alias outer 1 $output-stream (type $os))
    (export "output-stream" (type $os-t (eq $os)))
    (type $own-os (own $os-t))
    (export "get-stdout" (func (result $own-os)))
  ))
  (import "wasi:cli/stdout@0.2.0" (instance $stdout (type $stdout-inst)))

  (type $stdin-inst (instance
    (alias outer 1 $input-stream (type $is))
    (export "input-stream" (type $is-t (eq $is)))
    (type $own-is (own $is-t))
    (export "get-stdin" (func (result $own-is)))
  ))
  (import "wasi:cli/stdin@0.2.0" (instance $stdin (type $stdin-inst)))

  (type $network-inst (instance
    (type $ec (enum "unknown" "access-denied" "not-supported" "invalid-argument" "out-of-memory"
      "timeout" "concurrency-conflict" "not-in-progress" "would-block" "invalid-state"
      "new-socket-limit" "address-not-bindable" "address-in-use" "remote-unreachable"
      "connection-refused" "connection-reset" "connection-aborted" "datagram-too-large"
      "name-unresolvable" "temporary-resolver-failure" "permanent-resolver-failure"))
    (export "error-code" (type $ec-t (eq $ec)))
    (type $af (enum "ipv4" "ipv6"))
    (export "ip-address-family" (type $af-t (eq $af)))
  ))
  (import "wasi:sockets/network@0.2.0" (instance $network (type $network-inst)))
  (alias export $network "error-code" (type $error-code))
  (alias export $network "ip-address-family" (type $ip-af))
  (type $tcp-inst (instance (export "tcp-socket" (type (sub resource)))))
  (import "wasi:sockets/tcp@0.2.0" (instance $tcp (type $tcp-inst)))
  (alias export $tcp "tcp-socket" (type $tcp-socket))
  (type $tcp-create-inst (instance
    (alias outer 1 $error-code (type $ec))
    (export "error-code" (type $ec-t (eq $ec)))
    (alias outer 1 $ip-af (type $af))
    (export "ip-address-family" (type $af-t (eq $af)))
    (alias outer 1 $tcp-socket (type $ts))
    (export "tcp-socket" (type $ts-t (eq $ts)))
    (type $own-ts (own $ts-t))
    (type $create-result (result $own-ts (error $ec-t)))
    (export "create-tcp-socket" (func (param "address-family" $af-t) (result $create-result)))
  ))
  (import "wasi:sockets/tcp-create-socket@0.2.0" (instance $tcp-create (type $tcp-create-inst)))

  (type $posix-inst (instance
    (type $error-rec (record (field "denied" bool) (field "errno" s32) (field "message" string)))
    (export "error" (type $error (eq $error-rec)))
    (type $chmod-result (result (error $error)))
    (export "chmod" (func (param "path" string) (param "mode" u32) (result $chmod-result)))
  ))
  (import "sandball:host/posix@0.1.0" (instance $posix (type $posix-inst)))

  (core module $Mem
    (memory (export "memory") 1)
    (global $bump (mut i32) (i32.const 16384))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p
        (i32.and
          (i32.add (global.get $bump) (i32.sub (local.get 2) (i32.const 1)))
          (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
      (global.set $bump (i32.add (local.get $p) (local.get 3)))
      (local.get $p)))
  (core instance $mem-inst (instantiate $Mem))
  (alias core export $mem-inst "memory" (core memory $mem))
  (alias core export $mem-inst "realloc" (core func $realloc))

  (core func $write (canon lower (func $streams "[method]output-stream.blocking-write-and-flush") (memory $mem)))
  (core func $read (canon lower (func $streams "[method]input-stream.blocking-read") (memory $mem) (realloc $realloc)))
  (core func $get-stdout (canon lower (func $stdout "get-stdout")))
  (core func $get-stdin (canon lower (func $stdin "get-stdin")))
  (core func $chmod (canon lower (func $posix "chmod") (memory $mem) (realloc $realloc) string-encoding=utf8))
  (core func $tcp-create (canon lower (func $tcp-create "create-tcp-socket") (memory $mem)))

  (core module $Main
    (import "env" "memory" (memory 1))
    (import "host" "write" (func $write (param i32 i32 i32 i32)))
    (import "host" "read" (func $read (param i32 i64 i32)))
    (import "host" "get-stdout" (func $get-stdout (result i32)))
    (import "host" "get-stdin" (func $get-stdin (result i32)))
    (import "host" "chmod" (func $chmod (param i32 i32 i32 i32)))
    (import "host" "tcp-create" (func $tcp-create (param i32 i32)))
    (global $out (mut i32) (i32.const -1))
    (data (i32.const 1024) "hello from wasm\n")
    (data (i32.const 1040) "access-denied\n")
    (data (i32.const 1056) "allowed\n")
    (data (i32.const 2048) "{data}")
    (func $stdout (result i32)
      (if (i32.eq (global.get $out) (i32.const -1))
        (then (global.set $out (call $get-stdout))))
      (global.get $out))
    (func $print (param $ptr i32) (param $len i32)
      (call $write (call $stdout) (local.get $ptr) (local.get $len) (i32.const 64)))
    (func $echo
      (call $read (call $get-stdin) (i64.const 4096) (i32.const 96))
      (if (i32.eqz (i32.load8_u (i32.const 96)))
        (then (call $print (i32.load (i32.const 100)) (i32.load (i32.const 104))))))
    (func $flood (param $n i32)
      (loop $l
        (call $print (i32.const 0) (i32.const 1024))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br_if $l (i32.gt_s (local.get $n) (i32.const 0)))))
    (func (export "run") (result i32)
      {body}))
  (core instance $host
    (export "write" (func $write))
    (export "read" (func $read))
    (export "get-stdout" (func $get-stdout))
    (export "get-stdin" (func $get-stdin))
    (export "chmod" (func $chmod))
    (export "tcp-create" (func $tcp-create)))
  (core instance $env (export "memory" (memory $mem)))
  (core instance $main (instantiate $Main (with "env" (instance $env)) (with "host" (instance $host))))

  (func $run (result (result)) (canon lift (core func $main "run")))
  (instance $run-inst (export "run" (func $run)))
  (export "wasi:cli/run@0.2.0" (instance $run-inst))
)
"#
    )
}

/// A component binary whose `run` does `body`.
pub fn component(body: &str) -> Vec<u8> {
    component_with_data(body, "")
}

/// A component binary whose `run` does `body`, with `data` at address 2048.
pub fn component_with_data(body: &str, data: &str) -> Vec<u8> {
    wat::parse_str(component_wat(body, data)).expect("test component WAT is valid")
}
