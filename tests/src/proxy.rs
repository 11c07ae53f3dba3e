//! A loopback TCP proxy between the controller and a server (the test sshd), standing
//! in for a network (these kernels have no `netem`): it forwards bytes both ways, each
//! way with an optional delay, jitter and bandwidth limit ([`Shape`]), can cut every
//! connection it carries at once, as a network that drops would, and can cut a share
//! of its connections at random moments, or stall them (a node that takes the bytes and
//! never answers). New connections are accepted again after a cut. It counts the bytes
//! it carries each way. The tests use it as a library; `make bench` through the
//! `netproxy` binary.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the proxy does to the bytes it carries, each way.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    /// Added to every chunk's trip, each way (half the round trip it adds).
    pub delay: Duration,
    /// A further delay drawn at random up to this, per chunk (order is kept).
    pub jitter: Duration,
    /// Bytes per second each way, per connection; unlimited when `None`.
    pub rate: Option<u64>,
    /// The share of connections (0 to 1) cut at a random moment.
    pub cut_share: f64,
    /// The window after a connection opens in which its random cut falls.
    pub cut_within: Duration,
    /// Once this many bytes have gone one way, that way carries nothing more: what
    /// comes is read and dropped, the connection stays open (a node that hangs, from
    /// the first byte with `Some(0)`, or halfway through a handshake).
    pub stall_after: Option<usize>,
}

/// A running proxy; it stops (and cuts what it carries) when dropped.
pub struct Proxy {
    port: u16,
    carried: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
    cuts: Arc<AtomicUsize>,
    stalled: Arc<AtomicBool>,
    bytes: Arc<Bytes>,
}

/// The bytes a proxy has carried, over all its connections.
#[derive(Default)]
struct Bytes {
    /// From the clients to the server.
    up: AtomicU64,
    /// From the server to the clients.
    down: AtomicU64,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to
    /// `127.0.0.1:target`, as fast as loopback goes.
    pub fn start(target: u16) -> Proxy {
        Proxy::start_with(target, Shape::default())
    }

    /// [`Proxy::start`] with the bytes shaped by `shape`.
    pub fn start_with(target: u16, shape: Shape) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let port = listener.local_addr().expect("local address").port();
        let carried: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let cuts = Arc::new(AtomicUsize::new(0));
        let stalled = Arc::new(AtomicBool::new(false));
        let bytes = Arc::new(Bytes::default());
        let (c, s, k, b) = (carried.clone(), stop.clone(), cuts.clone(), bytes.clone());
        let held = stalled.clone();
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        let _ = client.set_nodelay(true);
                        if let Ok(server) = TcpStream::connect(("127.0.0.1", target)) {
                            let _ = server.set_nodelay(true);
                            forward(client, server, &c, &shape, &k, &held, &b);
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
            cuts,
            stalled,
            bytes,
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

    /// From now on, carries nothing either way on any connection, old or new: what
    /// comes is read and dropped, the connections stay open (a node that stops
    /// answering mid-run).
    pub fn stall(&self) {
        self.stalled.store(true, Ordering::Relaxed);
    }

    /// How many connections its random cuts ([`Shape::cut_share`]) have cut so far.
    pub fn random_cuts(&self) -> usize {
        self.cuts.load(Ordering::Relaxed)
    }

    /// The bytes carried so far, over all its connections: (to the server, from it).
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.bytes.up.load(Ordering::Relaxed),
            self.bytes.down.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.cut();
    }
}

/// Copies `client` ↔ `server`, each way shaped by `shape` and counted in `bytes`,
/// recording both sockets for a cut; cuts the pair at a random moment when the draw
/// says so.
fn forward(
    client: TcpStream,
    server: TcpStream,
    carried: &Arc<Mutex<Vec<TcpStream>>>,
    shape: &Shape,
    cuts: &Arc<AtomicUsize>,
    stalled: &Arc<AtomicBool>,
    bytes: &Arc<Bytes>,
) {
    let pairs = [
        (client.try_clone(), server.try_clone(), Way::Up),
        (server.try_clone(), client.try_clone(), Way::Down),
    ];
    if shape.cut_share > 0.0
        && rand::random::<f64>() < shape.cut_share
        && let (Ok(a), Ok(b)) = (client.try_clone(), server.try_clone())
    {
        let after = shape.cut_within.mul_f64(rand::random::<f64>());
        let cuts = cuts.clone();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            let _ = a.shutdown(Shutdown::Both);
            let _ = b.shutdown(Shutdown::Both);
            cuts.fetch_add(1, Ordering::Relaxed);
        });
    }
    {
        let mut c = carried.lock().unwrap_or_else(|e| e.into_inner());
        c.extend([client, server]);
    }
    for (from, to, way) in pairs {
        if let (Ok(from), Ok(to)) = (from, to) {
            let counter = Counter(bytes.clone(), way);
            one_way(from, to, shape.clone(), stalled.clone(), counter);
        }
    }
}

/// Which way bytes go: to the server or from it.
#[derive(Clone, Copy)]
enum Way {
    Up,
    Down,
}

/// Where one way of a connection counts the bytes it forwards.
struct Counter(Arc<Bytes>, Way);

impl Counter {
    fn add(&self, n: usize) {
        let total = match self.1 {
            Way::Up => &self.0.up,
            Way::Down => &self.0.down,
        };
        total.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Forwards `from` to `to`, counting what it reads in `counter`: unshaped, one thread copying; shaped, a reader stamping
/// each chunk as it arrives and a writer sending it once its delay (and the
/// bandwidth) allow, so that delay does not add up over a stream. Once the proxy is
/// stalled, or the shape's stall budget spent, chunks are read and dropped.
fn one_way(
    mut from: TcpStream,
    mut to: TcpStream,
    shape: Shape,
    stalled: Arc<AtomicBool>,
    counter: Counter,
) {
    let shaped = !shape.delay.is_zero() || !shape.jitter.is_zero() || shape.rate.is_some();
    let mut budget = shape.stall_after.unwrap_or(usize::MAX);
    // The part of a chunk of `n` bytes that still goes through.
    let mut passed = move |n: usize| {
        if stalled.load(Ordering::Relaxed) {
            return 0;
        }
        let pass = n.min(budget);
        budget -= pass;
        pass
    };
    if !shaped {
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            while let Ok(n) = from.read(&mut buf) {
                counter.add(n);
                if n == 0 || to.write_all(&buf[..passed(n)]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
        return;
    }
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = from.read(&mut buf) {
            counter.add(n);
            if n == 0
                || tx
                    .send((Instant::now(), buf[..passed(n)].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        let mut due = Instant::now();
        let mut free = Instant::now();
        while let Ok((arrived, chunk)) = rx.recv() {
            let jitter = shape.jitter.mul_f64(rand::random::<f64>());
            due = due.max(arrived + shape.delay + jitter).max(free);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if let Some(rate) = shape.rate {
                free = Instant::now() + Duration::from_secs_f64(chunk.len() as f64 / rate as f64);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
