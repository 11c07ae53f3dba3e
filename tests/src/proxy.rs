//! A loopback TCP proxy between the controller and a server (the test sshd): it
//! forwards bytes both ways and can cut every connection it carries at once, as a
//! network that drops would (these kernels have no `netem`). New connections are
//! accepted again after a cut.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running proxy; it stops (and cuts what it carries) when dropped.
pub struct Proxy {
    port: u16,
    carried: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to
    /// `127.0.0.1:target`.
    pub fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let port = listener.local_addr().expect("local address").port();
        let carried: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (carried.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        if let Ok(server) = TcpStream::connect(("127.0.0.1", target)) {
                            forward(client, server, &c);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Proxy {
            port,
            carried,
            stop,
        }
    }

    /// The port the controller connects to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Cuts every connection it carries, both ways; returns how many sockets it cut.
    pub fn cut(&self) -> usize {
        let mut carried = self.carried.lock().unwrap_or_else(|e| e.into_inner());
        for s in carried.iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
        let n = carried.len();
        carried.clear();
        n
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.cut();
    }
}

/// Copies `client` ↔ `server` on two threads, recording both sockets for a cut.
fn forward(client: TcpStream, server: TcpStream, carried: &Arc<Mutex<Vec<TcpStream>>>) {
    let pairs = [
        (client.try_clone(), server.try_clone()),
        (server.try_clone(), client.try_clone()),
    ];
    {
        let mut c = carried.lock().unwrap_or_else(|e| e.into_inner());
        c.extend([client, server]);
    }
    for pair in pairs {
        if let (Ok(mut from), Ok(mut to)) = pair {
            std::thread::spawn(move || {
                let mut buf = [0u8; 16384];
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 || to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
        }
    }
}
