//! [`Client`]: the one client of an external subject for one generation,
//! whatever carries its requests: a `cmd:` subject's tpb-subject/1 lines
//! ([`ProcessSubject`]), or a `lib:` subject's worker sharing a memory
//! region with the gate ([`ShmChannel`]: every operation, validators and
//! LUTs in compact slots, the rest as request and answer records). Both
//! are kept by one [`Supervisor`] each (restarts, give-up, stderr tail).

use super::process::{ProcessSubject, Reply, Supervisor};
use super::protocol::{Hello, Op, Request};
use super::shm_client::ShmChannel;

/// See the module docs.
pub enum Client {
    /// A `cmd:` subject's JSON lines.
    Lines(ProcessSubject),
    /// A `lib:` subject's worker.
    Shm(ShmChannel),
}

impl Client {
    /// The hello of the first start.
    pub fn hello(&self) -> &Hello {
        match self {
            Client::Lines(c) => c.hello(),
            Client::Shm(c) => c.hello(),
        }
    }

    /// True if the subject declared `op`.
    pub fn supports(&self, op: Op) -> bool {
        self.hello().ops.contains(&op)
    }

    /// The generation it serves.
    pub fn arch(&self) -> &str {
        match self {
            Client::Lines(c) => c.arch(),
            Client::Shm(c) => c.arch(),
        }
    }

    /// Its supervisor.
    pub fn supervisor(&self) -> &Supervisor {
        match self {
            Client::Lines(c) => c.supervisor(),
            Client::Shm(c) => c.supervisor(),
        }
    }

    /// Answers the transport delivered so far (well-formed or not).
    pub fn received(&self) -> u64 {
        match self {
            Client::Lines(c) => c.received(),
            Client::Shm(c) => c.received(),
        }
    }

    /// Restarts after faults.
    pub fn restarts(&self) -> u64 {
        self.supervisor().restarts()
    }

    /// Why it was given up, if it was.
    pub fn given_up(&self) -> Option<&str> {
        self.supervisor().given_up()
    }

    /// The last stderr lines (across restarts).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.supervisor().stderr_tail()
    }

    /// One request, one reply.
    pub fn call(&mut self, r: &Request) -> Reply {
        self.call_batch(std::slice::from_ref(r)).remove(0)
    }

    /// A batch of requests, one reply each in order (pipelined lines, or
    /// record hand-offs); `tick` is called as answers arrive.
    pub fn call_batch_with(&mut self, reqs: &[Request], tick: &dyn Fn()) -> Vec<Reply> {
        match self {
            Client::Lines(c) => c.call_batch_with(reqs, tick),
            Client::Shm(c) => c.call_batch(reqs, tick),
        }
    }

    /// [`Client::call_batch_with`] without progress calls.
    pub fn call_batch(&mut self, reqs: &[Request]) -> Vec<Reply> {
        self.call_batch_with(reqs, &|| {})
    }

    /// The `lib:` worker, for the compact validator and LUT hand-offs.
    pub fn shm(&mut self) -> Option<&mut ShmChannel> {
        match self {
            Client::Shm(c) => Some(c),
            Client::Lines(_) => None,
        }
    }
}
