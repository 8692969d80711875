//! A minimal RESP2 client over `std::net::TcpStream`: enough for `SET … NX PX`, `EVAL`,
//! `GET`, `DEL`, `REPLICAOF` and `INFO`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One RESP reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    pub fn int(&self) -> Option<i64> {
        match self {
            Reply::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<String> {
        match self {
            Reply::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            Reply::Status(s) => Some(s.clone()),
            _ => None,
        }
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Reply::Bulk(None) | Reply::Array(None))
    }
}

pub struct Redis {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Redis {
    pub fn connect(port: u16) -> Result<Self, String> {
        let s =
            TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("redis :{port}: {e}"))?;
        s.set_nodelay(true).ok();
        s.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let writer = s.try_clone().map_err(|e| e.to_string())?;
        Ok(Self {
            reader: BufReader::new(s),
            writer,
        })
    }

    /// Sends one command and reads its reply; a Redis error reply is an `Ok(Reply::Error)`.
    pub fn cmd(&mut self, args: &[&str]) -> Result<Reply, String> {
        let mut buf = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a.as_bytes());
            buf.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&buf).map_err(|e| e.to_string())?;
        self.read()
    }

    fn line(&mut self) -> Result<String, String> {
        let mut l = String::new();
        let n = self.reader.read_line(&mut l).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("redis closed the connection".to_owned());
        }
        Ok(l.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn read(&mut self) -> Result<Reply, String> {
        let l = self.line()?;
        let (kind, rest) = l.split_at(1.min(l.len()));
        let num = || {
            rest.parse::<i64>()
                .map_err(|e| format!("bad RESP {l:?}: {e}"))
        };
        Ok(match kind {
            "+" => Reply::Status(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Int(num()?),
            "$" => match num()? {
                n if n < 0 => Reply::Bulk(None),
                n => {
                    let mut b = vec![0; n as usize + 2];
                    std::io::Read::read_exact(&mut self.reader, &mut b)
                        .map_err(|e| e.to_string())?;
                    b.truncate(n as usize);
                    Reply::Bulk(Some(b))
                }
            },
            "*" => match num()? {
                n if n < 0 => Reply::Array(None),
                n => Reply::Array(Some((0..n).map(|_| self.read()).collect::<Result<_, _>>()?)),
            },
            _ => return Err(format!("bad RESP line {l:?}")),
        })
    }
}
