//! The shim's SSH channel read as its session's byte stream: the channel's data is the
//! shim's stdout (the frames); its extended data (the shim's stderr) and its exit status
//! are kept on the side, so that a session that ends unexpectedly can say how the shim
//! ended and quote its last words.

use futures::future::BoxFuture;
use russh::{ChannelMsg, ChannelReadHalf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// How much of the shim's stderr is kept (its end).
const TAIL: usize = 4096;
/// How many of its last lines an error quotes.
const LAST_LINES: usize = 10;

/// What the shim left behind: the end of its stderr and how it exited.
#[derive(Debug, Default)]
pub struct Ending {
    stderr: Vec<u8>,
    status: Option<String>,
}

impl Ending {
    fn stderr(&mut self, data: &[u8]) {
        self.stderr.extend_from_slice(data);
        if self.stderr.len() > 2 * TAIL {
            self.stderr.drain(..self.stderr.len() - TAIL);
        }
    }

    /// "exit status N" (or the signal), when the node said so.
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// The exit status, when the shim exited normally.
    pub fn code(&self) -> Option<u32> {
        self.status
            .as_deref()
            .and_then(|s| s.strip_prefix("exit status "))
            .and_then(|s| s.parse().ok())
    }

    /// What follows `prefix` on the last line of stderr that starts with it.
    pub fn line_after(&self, prefix: &str) -> Option<String> {
        String::from_utf8_lossy(&self.stderr)
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(prefix).map(|rest| rest.trim().to_string()))
    }

    /// The shim's last lines of stderr, joined with " | ".
    pub fn last_words(&self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.stderr);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return None;
        }
        Some(lines[lines.len().saturating_sub(LAST_LINES)..].join(" | "))
    }

    /// A description for an error: the status and the last words, or `None` when the
    /// node told nothing.
    pub fn describe(&self) -> Option<String> {
        match (self.status(), self.last_words()) {
            (None, None) => None,
            (Some(s), None) => Some(format!("the shim ended with {s}")),
            (None, Some(w)) => Some(format!("the shim's stderr: {w}")),
            (Some(s), Some(w)) => Some(format!("the shim ended with {s}; its stderr: {w}")),
        }
    }
}

type Next = BoxFuture<'static, (ChannelReadHalf, Option<ChannelMsg>)>;

enum State {
    Idle(ChannelReadHalf),
    Waiting(Next),
    Closed,
}

/// The channel's data as an [`AsyncRead`]; the end of stream comes when the channel
/// closes (after the exit status), so that [`Ending`] is complete by then.
pub struct ChannelReader {
    state: State,
    /// The data message being handed out, and how much of it was.
    current: Option<(ChannelMsg, usize)>,
    ending: Arc<Mutex<Ending>>,
}

impl ChannelReader {
    /// A reader of `half`; what the shim leaves behind goes to the returned [`Ending`].
    pub fn new(half: ChannelReadHalf) -> (ChannelReader, Arc<Mutex<Ending>>) {
        let ending = Arc::new(Mutex::new(Ending::default()));
        let reader = ChannelReader {
            state: State::Idle(half),
            current: None,
            ending: ending.clone(),
        };
        (reader, ending)
    }

    fn note(&self, f: impl FnOnce(&mut Ending)) {
        f(&mut self.ending.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

impl AsyncRead for ChannelReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            if let Some((ChannelMsg::Data { data }, used)) = &mut self.current {
                let n = buf.remaining().min(data.len() - *used);
                buf.put_slice(&data[*used..*used + n]);
                *used += n;
                if *used == data.len() {
                    self.current = None;
                }
                return Poll::Ready(Ok(()));
            }
            match std::mem::replace(&mut self.state, State::Closed) {
                State::Closed => return Poll::Ready(Ok(())),
                State::Idle(mut half) => {
                    self.state = State::Waiting(Box::pin(async move {
                        let msg = half.wait().await;
                        (half, msg)
                    }));
                }
                State::Waiting(mut next) => match next.as_mut().poll(cx) {
                    Poll::Pending => {
                        self.state = State::Waiting(next);
                        return Poll::Pending;
                    }
                    Poll::Ready((half, msg)) => {
                        self.state = State::Idle(half);
                        match msg {
                            None | Some(ChannelMsg::Close) => self.state = State::Closed,
                            Some(ChannelMsg::Data { data }) if !data.is_empty() => {
                                self.current = Some((ChannelMsg::Data { data }, 0));
                            }
                            Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                                self.note(|e| e.stderr(&data));
                            }
                            Some(ChannelMsg::ExitStatus { exit_status }) => {
                                self.note(|e| {
                                    e.status = Some(format!("exit status {exit_status}"))
                                });
                            }
                            Some(ChannelMsg::ExitSignal {
                                signal_name,
                                core_dumped,
                                ..
                            }) => self.note(|e| {
                                e.status = Some(format!(
                                    "signal {signal_name:?}{}",
                                    if core_dumped { " (core dumped)" } else { "" }
                                ))
                            }),
                            Some(_) => {}
                        }
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ending_keeps_the_last_lines_and_the_status() {
        let mut e = Ending::default();
        assert_eq!(e.describe(), None);
        for i in 0..30 {
            e.stderr(format!("line {i}\n").as_bytes());
        }
        e.stderr(&vec![b'x'; 3 * TAIL]);
        e.stderr(b"\nsandball-shim: cannot open the cache\n");
        e.status = Some("exit status 2".into());
        assert_eq!(e.code(), Some(2));
        assert_eq!(
            e.line_after("sandball-shim: "),
            Some("cannot open the cache".into())
        );
        assert_eq!(e.line_after("nothing: "), None);
        let d = e.describe().unwrap();
        assert!(
            d.starts_with("the shim ended with exit status 2; its stderr: "),
            "{d}"
        );
        assert!(d.ends_with("sandball-shim: cannot open the cache"), "{d}");
        assert!(d.len() < 2 * TAIL, "{}", d.len());
    }
}
