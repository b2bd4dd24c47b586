//! German's cache-coherence protocol with data, as a fabricsim [`Protocol`].
//!
//! A line-for-line port of the Murphi model `german.m` (the
//! Chou–Mannava–Park formulation that the Murphi family of checkers runs),
//! so that our checker's state counts and speed can be compared with theirs.
//!
//! Agents: agent 0 is the `Home` (InvSet, ShrSet, ExGntd, CurCmd, CurPtr,
//! MemData); agents 1..=NODE_NUM are the `Client`s (Cache[i].State and
//! Cache[i].Data), client `i` being agent `i + 1`. The ghost state is
//! AuxData, the latest value stored.
//!
//! Channels: german.m's three single-slot arrays are our three virtual
//! channels with capacity 1 per (source, destination, VC): VC 0 is Chan1
//! (ReqS/ReqE, client → home), VC 1 is Chan2 (GntS/GntE/Inv, home →
//! client), VC 2 is Chan3 (InvAck, client → home). `ChanN[i].Cmd = Empty`
//! is "no message in flight on that channel"; a guard `ChanN[i].Cmd = Empty`
//! is the capacity bound (a transition whose send would overflow a slot is
//! not enabled), and a guard `ChanN[i].Cmd = X` is the delivery of X.
//!
//! Rules and where they live:
//!
//! | german.m rule   | here                                              |
//! |-----------------|---------------------------------------------------|
//! | Store(i, d)     | client action `Store(d)` (environment)            |
//! | SendReqS(i)     | client action `SendReqS` (environment)            |
//! | SendReqE(i)     | client action `SendReqE` (environment)            |
//! | RecvReqS(i)     | home receives `ReqS` (Stall unless CurCmd = Empty)|
//! | RecvReqE(i)     | home receives `ReqE` (Stall unless CurCmd = Empty)|
//! | SendInv(i)      | home action `SendInv(i)`                          |
//! | SendInvAck(i)   | client receives `Inv`, sends `InvAck` on Chan3    |
//! | RecvInvAck(i)   | home receives `InvAck` (Stall if CurCmd = Empty)  |
//! | SendGntS(i)     | home action `SendGntS(i)`                         |
//! | SendGntE(i)     | home action `SendGntE(i)`                         |
//! | RecvGntS(i)     | client receives `GntS`                            |
//! | RecvGntE(i)     | client receives `GntE`                            |
//!
//! Undefined values. Murphi gives every variable an extra value,
//! "undefined", which is part of the state; german.m leaves or makes
//! undefined Cache[i].Data (in state I), CurPtr (when no request is being
//! served), and the Data field of every channel slot that carries none.
//! Here they are `Option`s: `Client::data` is `None` exactly when german.m
//! has Cache[i].Data undefined, `Home::cur_ptr` likewise, and a message's
//! data is a field of the message (`GntS(d)`, `GntE(d)`, `InvAck(Option<d>)`;
//! ReqS/ReqE/Inv carry none, as Chan1's Data is never assigned and Chan2's is
//! undefined whenever a grant has been received).
//!
//! Stale fields. A Murphi channel slot keeps its Data after its Cmd becomes
//! Empty unless a rule undefines it; a message that has been delivered
//! keeps nothing here, so the port equals german.m only if no rule ever
//! leaves a defined Data behind an Empty slot. Every rule that empties a
//! slot with data undefines it (RecvGntS, RecvGntE) except RecvInvAck,
//! which undefines Chan3[i].Data only when ExGntd is true. That suffices:
//! Chan3[i].Data is set only by SendInvAck from a cache in E; a cache is in
//! E only after GntE, which set ExGntd; ExGntd is cleared only by a
//! RecvInvAck, and while ExGntd holds ShrSet = {owner} so the owner's ack
//! is the only one that can be in flight. Hence an InvAck carrying data is
//! always received with ExGntd = true and its data is undefined. The port
//! does not rely on the argument: [`German::on_message`] reports a
//! `"stale data"` violation if an InvAck carrying data ever arrives with
//! ExGntd false (the state german.m would have and this port could not
//! represent), and reports `"undefined value"` where german.m would read an
//! undefined value (`MemData := Chan3[i].Data` with no data, an error in
//! Murphi). The tests check the correct protocol exhaustively, so neither
//! happens there, and its state counts equal rumur's exactly (see
//! `tests/german.rs`).
//!
//! Invariants CntrlProp and DataProp are german.m's, word for word.
//!
//! Mutants ([`MUTANTS`], [`German::with_mutant`]) are deliberately broken
//! variants the checker must catch.

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::agents::protocol::{
    AgentId, ChannelOrder, Ctx, Envelope, OpKind, Protocol, Renaming, Role, Scalarset, Step, Violation,
};
use crate::engine::pack::{get_byte, get_varint, put_varint, Pack};

/// A data value, `0..DATA_NUM`.
pub type Data = u8;

/// Chan1: ReqS/ReqE, client → home.
pub const CHAN1: u8 = 0;
/// Chan2: GntS/GntE/Inv, home → client.
pub const CHAN2: u8 = 1;
/// Chan3: InvAck, client → home.
pub const CHAN3: u8 = 2;

/// The home's agent id.
pub const HOME: AgentId = 0;

/// Cache[i].State.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheState {
    I,
    S,
    E,
}

/// CurCmd (the MSG_CMD values the home ever holds there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmd {
    Empty,
    ReqS,
    ReqE,
}

/// A message in a channel slot: its Cmd and, where defined, its Data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Msg {
    ReqS,
    ReqE,
    Inv,
    InvAck(Option<Data>),
    GntS(Data),
    GntE(Data),
}

/// The directory: german.m's InvSet, ShrSet, ExGntd, CurCmd, CurPtr and
/// MemData. Sets are bit masks over client indices.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Home {
    pub inv_set: u32,
    pub shr_set: u32,
    pub ex_gntd: bool,
    pub cur_cmd: Cmd,
    /// Client index; `None` is Murphi's undefined.
    pub cur_ptr: Option<u8>,
    pub mem_data: Data,
}

/// A client's cache line: Cache[i].State and Cache[i].Data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Client {
    pub state: CacheState,
    /// `None` is Murphi's undefined (always so in state I).
    pub data: Option<Data>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Home(Home),
    Client(Client),
}

// Hashing. The checker fingerprints every state it reaches, so agents and
// messages hash as packed words rather than field by field (the derived
// way): one write per client and per message, two for the home. Each
// packing is injective, and an agent's first byte says which kind it is
// (bit 0), so the encoding of a state stays unambiguous.

/// `None` as 0, `Some(d)` as d + 1 (9 bits).
#[inline]
fn opt_code(x: Option<u8>) -> u64 {
    x.map_or(0, |d| d as u64 + 1)
}

impl Hash for Home {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let low = (self.ex_gntd as u64) << 1
            | (self.cur_cmd as u64) << 2
            | opt_code(self.cur_ptr) << 4
            | (self.mem_data as u64) << 13;
        h.write_u128((low | (self.inv_set as u64) << 21) as u128 | (self.shr_set as u128) << 64);
    }
}

impl Hash for Client {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u16((1 | (self.state as u64) << 1 | opt_code(self.data) << 3) as u16);
    }
}

impl Hash for Agent {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Agent::Home(x) => x.hash(h),
            Agent::Client(x) => x.hash(h),
        }
    }
}

/// A message as 12 bits: its kind and its data.
#[inline]
fn msg_code(m: Msg) -> u64 {
    match m {
        Msg::ReqS => 0,
        Msg::ReqE => 1,
        Msg::Inv => 2,
        Msg::InvAck(d) => 3 | opt_code(d) << 3,
        Msg::GntS(d) => 4 | (d as u64) << 3,
        Msg::GntE(d) => 5 | (d as u64) << 3,
    }
}

// Packing (the checker's frontier, `engine::pack`): the same codes as
// the hash, as varints: a client and most messages in one byte, the home
// in five.

/// `opt_code`'s inverse.
#[inline]
fn opt_decode(x: u64) -> Option<u8> {
    x.checked_sub(1).map(|d| d as u8)
}

impl Pack for Agent {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Agent::Home(h) => {
                let low = (h.ex_gntd as u64) << 1 | (h.cur_cmd as u64) << 2 | opt_code(h.cur_ptr) << 4;
                put_varint(out, low);
                out.push(h.mem_data);
                put_varint(out, h.inv_set as u64);
                put_varint(out, h.shr_set as u64);
            }
            Agent::Client(c) => put_varint(out, 1 | (c.state as u64) << 1 | opt_code(c.data) << 3),
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let x = get_varint(src);
        if x & 1 == 1 {
            let state = [CacheState::I, CacheState::S, CacheState::E][(x >> 1 & 3) as usize];
            return Agent::Client(Client { state, data: opt_decode(x >> 3) });
        }
        Agent::Home(Home {
            ex_gntd: x >> 1 & 1 == 1,
            cur_cmd: [Cmd::Empty, Cmd::ReqS, Cmd::ReqE][(x >> 2 & 3) as usize],
            cur_ptr: opt_decode(x >> 4),
            mem_data: get_byte(src),
            inv_set: get_varint(src) as u32,
            shr_set: get_varint(src) as u32,
        })
    }
}

impl Pack for Msg {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, msg_code(*self));
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let c = get_varint(src);
        let d = (c >> 3) as Data;
        match c & 7 {
            0 => Msg::ReqS,
            1 => Msg::ReqE,
            2 => Msg::Inv,
            3 => Msg::InvAck(opt_decode(c >> 3)),
            4 => Msg::GntS(d),
            5 => Msg::GntE(d),
            k => panic!("{k} is not a packed German message"),
        }
    }
}

/// The message with its data renamed.
#[inline]
fn rename_msg(m: Msg, d: impl Fn(Data) -> Data) -> Msg {
    match m {
        Msg::InvAck(x) => Msg::InvAck(x.map(d)),
        Msg::GntS(x) => Msg::GntS(d(x)),
        Msg::GntE(x) => Msg::GntE(d(x)),
        m => m,
    }
}

/// german.m's scalarsets, as [`Protocol::scalarsets`] numbers them.
const NODE_SET: usize = 0;
const DATA_SET: usize = 1;

impl Hash for Msg {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u16(msg_code(*self) as u16);
    }
}

/// Spontaneous rules. Client indices are german.m's node numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Client: Store(d) in E (environment).
    Store(Data),
    /// Client: SendReqS (environment).
    SendReqS,
    /// Client: SendReqE (environment).
    SendReqE,
    /// Home: SendInv(i).
    SendInv(u8),
    /// Home: SendGntS(i).
    SendGntS(u8),
    /// Home: SendGntE(i).
    SendGntE(u8),
}

fn set_str(mask: u32) -> String {
    let v: Vec<String> = (0..32).filter(|i| mask >> i & 1 == 1).map(|i| i.to_string()).collect();
    format!("{{{}}}", v.join(","))
}

fn opt_str(x: Option<u8>) -> String {
    x.map_or("undef".to_string(), |d| d.to_string())
}

impl fmt::Debug for Home {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Home {{ InvSet: {}, ShrSet: {}, ExGntd: {}, CurCmd: {:?}, CurPtr: {}, MemData: {} }}",
            set_str(self.inv_set),
            set_str(self.shr_set),
            self.ex_gntd,
            self.cur_cmd,
            opt_str(self.cur_ptr),
            self.mem_data
        )
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}(data {})", self.state, opt_str(self.data))
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Agent::Home(h) => h.fmt(f),
            Agent::Client(c) => c.fmt(f),
        }
    }
}

/// Deliberately broken variants, by name. Each changes one rule of
/// german.m; in brackets, what catches it first with 2 or 3 clients and
/// the deadlock check on (`tests/german.rs`; rumur, given the same edit to
/// german.m, reports the same property with a trace of the same length,
/// except for the two liveness bugs, see there):
///
/// - `grant-before-acks`: SendGntE without its `forall j: ShrSet[j] = false`
///   guard: an exclusive grant before every invalidation is acknowledged
///   (CntrlProp).
/// - `forget-sharer`: SendGntS does not add the requester to ShrSet
///   (CntrlProp).
/// - `stale-data`: RecvInvAck ignores the written-back data, so MemData
///   keeps a stale value that later grants hand out (DataProp).
/// - `drop-writeback`: SendInvAck from E sends no data; the home then
///   reads an undefined value, an error in Murphi ("undefined value").
/// - `ack-keeps-copy`: SendInvAck acknowledges without invalidating the
///   cache (DataProp).
/// - `no-exclusive-flag`: SendGntE does not set ExGntd, so the home forgets
///   an exclusive copy exists (DataProp).
/// - `store-in-shared`: Store is also enabled in S (DataProp).
/// - `reqs-no-inv`: SendInv only for ReqE, so a ReqS never recalls an E
///   copy and the home waits forever ("deadlock").
/// - `inv-on-reqs`: SendInv for every ReqS, not only when ExGntd: a sharer's
///   acknowledgement can arrive after its request was served; it is stranded
///   until the next request ("deadlock"), which it then corrupts by removing
///   a sharer that holds a new copy (CntrlProp without the deadlock check).
pub const MUTANTS: &[&str] = &[
    "grant-before-acks",
    "forget-sharer",
    "stale-data",
    "drop-writeback",
    "ack-keeps-copy",
    "no-exclusive-flag",
    "store-in-shared",
    "reqs-no-inv",
    "inv-on-reqs",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mutant {
    GrantBeforeAcks,
    ForgetSharer,
    StaleData,
    DropWriteback,
    AckKeepsCopy,
    NoExclusiveFlag,
    StoreInShared,
    ReqsNoInv,
    InvOnReqS,
}

impl Mutant {
    fn parse(name: &str) -> Option<Mutant> {
        Some(match name {
            "grant-before-acks" => Mutant::GrantBeforeAcks,
            "forget-sharer" => Mutant::ForgetSharer,
            "stale-data" => Mutant::StaleData,
            "drop-writeback" => Mutant::DropWriteback,
            "ack-keeps-copy" => Mutant::AckKeepsCopy,
            "no-exclusive-flag" => Mutant::NoExclusiveFlag,
            "store-in-shared" => Mutant::StoreInShared,
            "reqs-no-inv" => Mutant::ReqsNoInv,
            "inv-on-reqs" => Mutant::InvOnReqS,
            _ => return None,
        })
    }
}

/// German's protocol with `clients` nodes (NODE_NUM) and `data` values
/// (DATA_NUM).
#[derive(Debug, Clone)]
pub struct German {
    clients: usize,
    data: usize,
    mutant: Option<Mutant>,
    mutant_name: Option<String>,
    /// Symmetry reduction over german.m's scalarsets NODE and DATA.
    symmetry: bool,
}

/// german.m's three channels: each a FIFO (a single slot), named as Murphi names them.
pub(super) const ORDERS: [ChannelOrder; 3] = [ChannelOrder::Fifo; 3];
pub(super) const CHANNEL_NAMES: [&str; 3] = ["chan1", "chan2", "chan3"];

impl German {
    /// The correct protocol. Panics unless 1 <= clients <= 32 and
    /// 1 <= data <= 255.
    pub fn new(clients: usize, data: usize) -> Self {
        assert!((1..=32).contains(&clients), "German's protocol: 1 to 32 clients, not {clients}");
        assert!((1..=255).contains(&data), "German's protocol: 1 to 255 data values, not {data}");
        German { clients, data, mutant: None, mutant_name: None, symmetry: false }
    }

    /// The protocol, or one of its broken variants named in [`MUTANTS`].
    pub fn with_mutant(clients: usize, data: usize, mutant: Option<&str>) -> Result<Self, String> {
        let mut g = German::new(clients, data);
        if let Some(name) = mutant {
            g.mutant = Some(
                Mutant::parse(name)
                    .ok_or_else(|| format!("unknown German mutant {name:?}; known: {}", MUTANTS.join(", ")))?,
            );
            g.mutant_name = Some(name.to_string());
        }
        Ok(g)
    }

    /// With symmetry reduction over german.m's two scalarsets, NODE (the
    /// clients) and DATA (the values): one state per orbit, as Rumur and
    /// CMurphi count them.
    pub fn with_symmetry(mut self, on: bool) -> Self {
        self.symmetry = on;
        self
    }

    pub fn clients(&self) -> usize {
        self.clients
    }

    #[inline]
    pub(super) fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    #[inline]
    fn client_agent(i: u8) -> AgentId {
        i + 1
    }
}

fn home(agents: &[Agent]) -> &Home {
    match &agents[HOME as usize] {
        Agent::Home(h) => h,
        Agent::Client(_) => unreachable!("agent 0 is the home"),
    }
}

fn client(a: &Agent) -> &Client {
    match a {
        Agent::Client(c) => c,
        Agent::Home(_) => unreachable!("agents 1.. are clients"),
    }
}

impl Protocol for German {
    type Agent = Agent;
    type Msg = Msg;
    /// AuxData.
    type Ghost = Data;
    type Action = Action;

    fn name(&self) -> String {
        let base = format!("german-{}c{}d", self.clients, self.data);
        match &self.mutant_name {
            Some(m) => format!("{base}-{m}"),
            None => base,
        }
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        &ORDERS
    }

    /// Murphi's names of [`CHAN1`], [`CHAN2`], [`CHAN3`].
    fn vc_names(&self) -> Vec<String> {
        CHANNEL_NAMES.map(String::from).to_vec()
    }

    /// Every channel is a single slot.
    fn capacity(&self) -> usize {
        1
    }

    /// `ruleset d : DATA do startstate`: one initial state per value.
    fn initial(&self) -> Vec<(Vec<Agent>, Data)> {
        (0..self.data as Data)
            .map(|d| {
                let mut agents = vec![Agent::Home(Home {
                    inv_set: 0,
                    shr_set: 0,
                    ex_gntd: false,
                    cur_cmd: Cmd::Empty,
                    cur_ptr: None,
                    mem_data: d,
                })];
                agents.extend((0..self.clients).map(|_| Agent::Client(Client { state: CacheState::I, data: None })));
                (agents, d)
            })
            .collect()
    }

    fn on_message(
        &self,
        agent: &mut Agent,
        ctx: &mut Ctx<Msg, Data>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match agent {
            Agent::Home(h) => return self.home_receives(h, ctx, from - 1, msg),
            Agent::Client(c) => match msg {
                // SendInvAck
                Msg::Inv => ctx.send(HOME, CHAN3, self.inv_ack(c)),
                // RecvGntS
                Msg::GntS(d) => {
                    c.state = CacheState::S;
                    c.data = Some(d);
                    ctx.done(REQUEST);
                }
                // RecvGntE
                Msg::GntE(d) => {
                    c.state = CacheState::E;
                    c.data = Some(d);
                    ctx.done(REQUEST);
                }
                _ => return Err(Violation::unexpected(*c, msg)),
            },
        }
        Ok(Step::Done)
    }

    fn actions(&self, agent: &Agent, _me: AgentId, _ghost: &Data, out: &mut Vec<Action>) {
        match agent {
            Agent::Home(h) => self.home_actions(h, |a| out.push(a)),
            Agent::Client(c) => {
                if self.may_store(c.state) {
                    out.extend((0..self.data as Data).map(Action::Store));
                }
                if c.state == CacheState::I {
                    out.push(Action::SendReqS);
                }
                if c.state != CacheState::E {
                    out.push(Action::SendReqE);
                }
            }
        }
    }

    fn act(&self, agent: &mut Agent, ctx: &mut Ctx<Msg, Data>, action: Action) -> Result<(), Violation> {
        match (agent, action) {
            (Agent::Client(c), Action::Store(d)) => {
                c.data = Some(d);
                *ctx.ghost = d;
                ctx.issued(STORE, OpKind::Store);
                ctx.done(STORE);
            }
            (Agent::Client(_), Action::SendReqS) => {
                ctx.issued(REQUEST, OpKind::Load);
                ctx.send(HOME, CHAN1, Msg::ReqS)
            }
            (Agent::Client(_), Action::SendReqE) => {
                ctx.issued(REQUEST, OpKind::Store);
                ctx.send(HOME, CHAN1, Msg::ReqE)
            }
            (Agent::Home(h), a @ (Action::SendInv(_) | Action::SendGntS(_) | Action::SendGntE(_))) => {
                self.home_act(h, ctx, a, |ctx, i, m| ctx.send(Self::client_agent(i), CHAN2, m))
            }
            (a, action) => {
                return Err(Violation { kind: "bad action", detail: format!("{action:?} for {a:?}") });
            }
        }
        Ok(())
    }

    fn is_environment(&self, action: &Action) -> bool {
        matches!(action, Action::Store(_) | Action::SendReqS | Action::SendReqE)
    }

    fn invariant(&self, agents: &[Agent], aux: &Data) -> Result<(), (String, String)> {
        props(home(agents), agents[1..].iter().map(client), *aux)
    }

    /// The home is busy while it serves a request (CurCmd != Empty).
    fn busy(&self, agent: &Agent) -> bool {
        matches!(agent, Agent::Home(h) if h.cur_cmd != Cmd::Empty)
    }

    /// NODE (set 0) and DATA (set 1). Clients are sorted by a key that
    /// holds everything german.m says about a node: its cache, its three
    /// channel slots, its InvSet and ShrSet bits and whether CurPtr names
    /// it; so clients with equal keys are interchangeable (`complete`).
    /// The data values are few, and every renaming of them is tried.
    fn scalarsets(&self) -> Vec<Scalarset> {
        if !self.symmetry {
            return Vec::new();
        }
        vec![
            Scalarset { name: "NODE", size: self.clients, keyed: true, complete: true },
            Scalarset { name: "DATA", size: self.data, keyed: false, complete: false },
        ]
    }

    fn rename(&self, r: &Renaming, from: &[Agent], to: &mut [Agent], ghost: &mut Data, mail: &mut [Envelope<Msg>]) {
        let d = |x: Data| r.of(DATA_SET, x);
        let agent = |a: AgentId| if a == HOME { HOME } else { r.of(NODE_SET, a - 1) + 1 };
        for (i, a) in from.iter().enumerate() {
            to[agent(i as AgentId) as usize] = match *a {
                Agent::Home(h) => Agent::Home(Home {
                    inv_set: r.mask(NODE_SET, h.inv_set as u64) as u32,
                    shr_set: r.mask(NODE_SET, h.shr_set as u64) as u32,
                    cur_ptr: h.cur_ptr.map(|c| r.of(NODE_SET, c)),
                    mem_data: d(h.mem_data),
                    ..h
                }),
                Agent::Client(c) => Agent::Client(Client { state: c.state, data: c.data.map(d) }),
            };
        }
        *ghost = d(*ghost);
        for e in mail.iter_mut() {
            e.to = agent(e.to);
            e.from = agent(e.from);
            e.msg = rename_msg(e.msg, d);
        }
    }

    fn element_keys(
        &self,
        _set: usize,
        r: &Renaming,
        agents: &[Agent],
        _ghost: &Data,
        mail: &[Envelope<Msg>],
        out: &mut [u64],
    ) {
        // Only NODE is keyed. Bits: cache state and data (11), Chan1, Chan2
        // and Chan3 slots (12 each: empty or a message and its data),
        // InvSet, ShrSet, CurPtr = i.
        let d = |x: Data| r.of(DATA_SET, x);
        let h = home(agents);
        for (i, k) in out.iter_mut().enumerate() {
            let c = client(&agents[i + 1]);
            *k = (c.state as u64) << 50
                | opt_code(c.data.map(d)) << 39
                | ((h.inv_set >> i & 1) as u64) << 2
                | ((h.shr_set >> i & 1) as u64) << 1
                | (h.cur_ptr == Some(i as u8)) as u64;
        }
        for e in mail {
            let (i, chan) = if e.to == HOME { (e.from - 1, e.vc) } else { (e.to - 1, e.vc) };
            // Each slot holds one message (capacity 1).
            out[i as usize] |= (msg_code(rename_msg(e.msg, d)) + 1) << (3 + 12 * chan as u32);
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        if id == HOME {
            "home".to_string()
        } else {
            format!("client{}", id - 1)
        }
    }

    fn role(&self, id: AgentId) -> Role {
        if id == HOME {
            Role::Home
        } else {
            Role::Core
        }
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        matches!(msg, Msg::GntS(_) | Msg::GntE(_) | Msg::InvAck(Some(_)))
    }
}

// german.m's rules at the home and a client's answer to Inv, shared by its
// free-running clients (here) and the program cores of `german_cores`
// (one home per location there).
impl German {
    /// RecvReqS, RecvReqE and RecvInvAck from client `i`.
    #[inline]
    pub(super) fn home_receives<M, G>(
        &self,
        h: &mut Home,
        ctx: &mut Ctx<M, G>,
        i: u8,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            // RecvReqS / RecvReqE
            Msg::ReqS | Msg::ReqE => {
                if h.cur_cmd != Cmd::Empty {
                    return Ok(Step::Stall);
                }
                h.cur_cmd = if msg == Msg::ReqS { Cmd::ReqS } else { Cmd::ReqE };
                h.cur_ptr = Some(i);
                h.inv_set = h.shr_set;
            }
            // RecvInvAck
            Msg::InvAck(data) => {
                if h.cur_cmd == Cmd::Empty {
                    return Ok(Step::Stall);
                }
                h.shr_set &= !(1 << i);
                if h.ex_gntd {
                    h.ex_gntd = false;
                    let Some(d) = data else {
                        return Err(Violation {
                            kind: "undefined value",
                            detail: format!("RecvInvAck({i}): MemData := Chan3[{i}].Data, which is undefined"),
                        });
                    };
                    if !self.is(Mutant::StaleData) {
                        h.mem_data = d;
                    }
                    ctx.memory_write(0);
                } else if data.is_some() {
                    return Err(Violation {
                        kind: "stale data",
                        detail: format!("RecvInvAck({i}) with ExGntd = false leaves Chan3[{i}].Data defined"),
                    });
                }
            }
            _ => return Err(Violation::unexpected(*h, msg)),
        }
        Ok(Step::Done)
    }

    /// The home's enabled rules: SendInv, SendGntS, SendGntE.
    #[inline]
    pub(super) fn home_actions(&self, h: &Home, mut out: impl FnMut(Action)) {
        let inv_ok = match h.cur_cmd {
            Cmd::ReqE => true,
            Cmd::ReqS => (h.ex_gntd || self.is(Mutant::InvOnReqS)) && !self.is(Mutant::ReqsNoInv),
            Cmd::Empty => false,
        };
        if inv_ok {
            let mut m = h.inv_set;
            while m != 0 {
                out(Action::SendInv(m.trailing_zeros() as u8));
                m &= m - 1;
            }
        }
        if let (Some(i), false) = (h.cur_ptr, h.ex_gntd) {
            match h.cur_cmd {
                Cmd::ReqS => out(Action::SendGntS(i)),
                Cmd::ReqE if h.shr_set == 0 || self.is(Mutant::GrantBeforeAcks) => out(Action::SendGntE(i)),
                _ => {}
            }
        }
    }

    /// The home takes one of its rules; `send(ctx, i, m)` puts `m` in
    /// client `i`'s Chan2.
    #[inline]
    pub(super) fn home_act<M, G>(
        &self,
        h: &mut Home,
        ctx: &mut Ctx<M, G>,
        action: Action,
        send: impl Fn(&mut Ctx<M, G>, u8, Msg),
    ) {
        match action {
            Action::SendInv(i) => {
                send(ctx, i, Msg::Inv);
                h.inv_set &= !(1 << i);
            }
            Action::SendGntS(i) => {
                ctx.memory_read(0);
                send(ctx, i, Msg::GntS(h.mem_data));
                if !self.is(Mutant::ForgetSharer) {
                    h.shr_set |= 1 << i;
                }
                h.cur_cmd = Cmd::Empty;
                h.cur_ptr = None;
            }
            Action::SendGntE(i) => {
                ctx.memory_read(0);
                send(ctx, i, Msg::GntE(h.mem_data));
                h.shr_set |= 1 << i;
                h.ex_gntd = !self.is(Mutant::NoExclusiveFlag);
                h.cur_cmd = Cmd::Empty;
                h.cur_ptr = None;
            }
            Action::Store(_) | Action::SendReqS | Action::SendReqE => unreachable!("a client's rule"),
        }
    }

    /// SendInvAck: the acknowledgement `c` sends for an Inv (with its data
    /// from E), and `c` invalidated.
    #[inline]
    pub(super) fn inv_ack(&self, c: &mut Client) -> Msg {
        let data = if c.state == CacheState::E && !self.is(Mutant::DropWriteback) { c.data } else { None };
        if !self.is(Mutant::AckKeepsCopy) {
            c.state = CacheState::I;
            c.data = None;
        }
        Msg::InvAck(data)
    }

    /// Whether a client may store in `state` (E; S too for a mutant).
    #[inline]
    pub(super) fn may_store(&self, state: CacheState) -> bool {
        state == CacheState::E || (state == CacheState::S && self.is(Mutant::StoreInShared))
    }
}

/// german.m's CntrlProp and DataProp for one line: its home, its clients
/// in node order, AuxData.
#[inline]
pub(super) fn props<'a>(
    h: &Home,
    clients: impl Iterator<Item = &'a Client> + Clone,
    aux: Data,
) -> Result<(), (String, String)> {
    // CntrlProp: forall i != j: (State[i] = E -> State[j] = I)
    //                         & (State[i] = S -> State[j] = I | State[j] = S)
    let mut holder: Option<(usize, CacheState)> = None;
    for (i, c) in clients.clone().enumerate() {
        let s = c.state;
        if s == CacheState::I {
            continue;
        }
        if let Some((j, t)) = holder {
            if s == CacheState::E || t == CacheState::E {
                return Err((
                    "CntrlProp".into(),
                    format!("client{j} is {t:?} while client{i} is {s:?} (german.m nodes {j} and {i})"),
                ));
            }
        } else {
            holder = Some((i, s));
        }
    }
    // DataProp: (ExGntd = false -> MemData = AuxData)
    //         & forall i: State[i] != I -> Data[i] = AuxData
    if !h.ex_gntd && h.mem_data != aux {
        return Err((
            "DataProp".into(),
            format!("ExGntd is false but MemData = {} differs from AuxData = {aux}", h.mem_data),
        ));
    }
    for (i, c) in clients.enumerate() {
        if c.state != CacheState::I && c.data != Some(aux) {
            return Err((
                "DataProp".into(),
                format!("client{i} is {:?} with data {} but AuxData = {aux}", c.state, opt_str(c.data)),
            ));
        }
    }
    Ok(())
}

/// Operation ids a client reports for latency statistics: its one request
/// (ReqS/ReqE until the grant) and its stores (done at once).
const REQUEST: u64 = 0;
const STORE: u64 = 1;
