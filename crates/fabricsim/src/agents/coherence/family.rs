//! MSI, MESI and German's protocol as families of the registry.

use std::sync::Arc;

use super::core::{check_protocol_limits, FrontEnd};
use super::directory::{Directory, Variant, MAX_LOCS, MAX_PROCS, MUTANTS as DIRECTORY_MUTANTS};
use super::german::German;
use super::german_cores::GermanCores;
use crate::agents::family::{
    find_mutant, in_range, CacheUse, CheckSize, Driver, Family, Litmus, LitmusAlias, LitmusVisitor, Machine, NoKeys,
    ParamError, Runs,
};
use crate::programs::{Model, Program};

const DIRECTORY_ABOUT: [(&str, &str); 6] = [
    ("grant-before-acks", "a requester takes M when the data arrives, before all invalidation acks"),
    ("forget-sharer", "the directory forgets to record a new sharer"),
    ("stale-data", "the directory ignores the owner's copy-back, so memory stays stale"),
    ("drop-writeback", "the directory drops the data of a write-back"),
    ("inv-without-ack", "a sharer invalidates its copy without acknowledging"),
    ("reorder-release", "the RC front end lets a release overtake earlier operations"),
];

fn directory(variant: Variant, size: &CheckSize, mutant: Option<&str>) -> Result<Directory, ParamError> {
    in_range("caches", size.caches, 1, MAX_PROCS, "")?;
    in_range("addresses", size.addresses, 1, MAX_LOCS, "")?;
    if size.directories == 0 || size.directories > size.addresses {
        return Err(ParamError::new(
            "directories",
            format!("{}: expected 1 to the number of addresses", size.directories),
        ));
    }
    in_range("values", size.values, 1, 8, "")?;
    let mutant = find_mutant(DIRECTORY_MUTANTS, mutant)?;
    Ok(Directory::free(variant, size.caches, size.directories, size.addresses, size.values)
        .with_mutant(mutant)
        .with_symmetry(size.symmetry))
}

/// The timed directory protocol: a litmus program's cores, workload-driven
/// cores (with `[protocol.cache]`'s capacity, if given) or random ones.
fn timed_directory(variant: Variant, m: &Machine) -> Directory {
    let fe = FrontEnd::of(m.model);
    let p = match &m.program {
        Some(prog) => Directory::running(variant, prog.clone(), fe, m.homes),
        None if m.driver == Driver::Workload => {
            Directory::timed(variant, m.cores, m.homes, m.lines, m.cache, m.mshrs, fe)
        }
        None => Directory::free(variant, m.cores, m.homes, m.lines, 2),
    };
    p.with_granule(m.granule as usize)
}

/// MSI's and MESI's timed machine: cores driven by a workload, a random
/// driver or a litmus program, with the shared front end and caches.
const DIRECTORY_RUNS: Runs = Runs {
    drivers: &[Driver::Workload, Driver::Random, Driver::Own],
    programs: true,
    cache: CacheUse::Optional,
    interleave: true,
    front_end: true,
    line_state: true,
    ..Runs::BASE
};

fn directory_machine(name: &str, m: &Machine) -> Result<(), ParamError> {
    if m.cores > MAX_PROCS {
        return Err(ParamError::new("requester", format!("{} caches: {name} supports at most {MAX_PROCS}", m.cores)));
    }
    Ok(())
}

/// Directory MSI (`MESI = false`: the Primer's protocol, the baseline the
/// seeds build on) or MESI (`true`: MSI with the exclusive clean state):
/// one family each, differing only in the directory's variant.
pub struct DirectoryFamily<const MESI: bool>;

/// MSI (the Primer's directory protocol).
pub type Msi = DirectoryFamily<false>;
/// MESI: MSI with the exclusive clean state.
pub type Mesi = DirectoryFamily<true>;

impl<const MESI: bool> DirectoryFamily<MESI> {
    const VARIANT: Variant = if MESI { Variant::Mesi } else { Variant::Msi };
}

impl<const MESI: bool> Family for DirectoryFamily<MESI> {
    const NAME: &'static str = if MESI { "mesi" } else { "msi" };
    const ABOUT: &'static str = if MESI {
        "directory MESI: MSI with an exclusive clean state (E) granted to a sole reader"
    } else {
        "directory MSI (Sorin, Hill and Wood's Primer): caches, directories, an unordered network"
    };
    const MUTANTS: &'static [(&'static str, &'static str)] = &DIRECTORY_ABOUT;
    const SIZES: [Option<&'static str>; 4] =
        [Some("caches (cores)"), Some("directories"), Some("addresses"), Some("data values")];
    const SYMMETRY: bool = true;
    type CheckParams = ();
    type Checked = Directory;
    type Timed = Directory;
    type RunTable = crate::agents::family::NoKeys;

    fn check_params(_: &NoKeys) -> Result<(), ParamError> {
        Ok(())
    }

    fn checked(size: &CheckSize, _: &(), mutant: Option<&str>) -> Result<Directory, ParamError> {
        directory(Self::VARIANT, size, mutant)
    }

    const RUNS: Option<Runs> = Some(DIRECTORY_RUNS);

    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        directory_machine(Self::NAME, m)
    }

    fn timed(m: &Machine) -> Result<Directory, String> {
        Ok(timed_directory(Self::VARIANT, m))
    }

    const NO_LITMUS: Option<&'static str> = None;

    fn litmus(
        program: Arc<Program>,
        model: Model,
        _: &NoKeys,
        mutant: Option<&str>,
    ) -> Result<Litmus<Directory>, ParamError> {
        let mutant = find_mutant(DIRECTORY_MUTANTS, mutant)?;
        check_protocol_limits(&program).map_err(|e| ParamError::new("program", format!("{}: {e}", program.name)))?;
        let p = Directory::running(Self::VARIANT, program, FrontEnd::of(model), 1).with_mutant(mutant);
        Ok(Litmus { protocol: p, outcome: Directory::outcome })
    }

    fn litmus_alias(base: &str, extra: Option<&str>) -> LitmusAlias {
        (base == Self::NAME).then(|| match extra {
            None => Ok(toml::Table::new()),
            Some(x) => Err(format!("@{x}: {} takes nothing after @", Self::NAME)),
        })
    }
}

/// German's protocol, a port of Murphi's german.m (the checkers' benchmark).
pub struct GermanFamily;

impl Family for GermanFamily {
    const NAME: &'static str = "german";
    const ABOUT: &'static str =
        "German's protocol with data, line for line Murphi's german.m (compare state counts with Rumur and CMurphi)";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("grant-before-acks", "SendGntE without waiting for every invalidation's acknowledgement"),
        ("forget-sharer", "SendGntS does not add the requester to ShrSet"),
        ("stale-data", "RecvInvAck ignores the written-back data"),
        ("drop-writeback", "SendInvAck from E sends no data"),
        ("ack-keeps-copy", "SendInvAck acknowledges without invalidating the cache"),
        ("no-exclusive-flag", "SendGntE does not set ExGntd"),
        ("store-in-shared", "Store is also enabled in S"),
        ("reqs-no-inv", "SendInv only for ReqE: a ReqS never recalls an E copy"),
        ("inv-on-reqs", "SendInv for every ReqS, not only when ExGntd"),
    ];
    const SIZES: [Option<&'static str>; 4] = [Some("clients"), None, None, Some("data values")];
    const NO_LITMUS: Option<&'static str> = None;
    const SYMMETRY: bool = true;
    type CheckParams = ();
    type Checked = German;
    type Timed = German;
    type RunTable = crate::agents::family::NoKeys;

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Random],
        drivers_note: "german's clients take no workload",
        cache: CacheUse::Refused("german's caches hold every line they touch; expected no [protocol.cache]"),
        ..Runs::BASE
    });

    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        if m.homes != 1 {
            return Err(ParamError::new(
                "memory",
                format!("{} memories: german has one home; expected 1 memory", m.homes),
            ));
        }
        if !(1..=200).contains(&m.values) {
            return Err(ParamError::new("protocol.values", format!("{}: expected 1 to 200 data values", m.values)));
        }
        Ok(())
    }

    fn timed(m: &Machine) -> Result<German, String> {
        Ok(German::new(m.cores, m.values))
    }

    /// The program's cores on german.m's rules, a home per location
    /// ([`GermanCores`]: german.m's own clients stay as they are).
    fn litmus_with<V: LitmusVisitor>(
        program: Arc<Program>,
        model: Model,
        _: &NoKeys,
        mutant: Option<&str>,
        v: V,
    ) -> Result<V::Out, ParamError> {
        let name = &program.name;
        check_protocol_limits(&program).map_err(|e| ParamError::new("program", format!("{name}: {e}")))?;
        let rules = german_rules(program.threads.len().clamp(1, 32), 1, mutant)?;
        let p = GermanCores::new(rules, program.clone(), FrontEnd::of(model))
            .map_err(|e| ParamError::new("program", format!("{name}: {e}")))?;
        Ok(v.visit(Litmus { protocol: p, outcome: GermanCores::outcome }))
    }

    fn check_params(_: &NoKeys) -> Result<(), ParamError> {
        Ok(())
    }

    fn checked(size: &CheckSize, _: &(), mutant: Option<&str>) -> Result<German, ParamError> {
        in_range("caches", size.caches, 1, 8, "clients")?;
        in_range("values", size.values, 1, 8, "")?;
        Ok(german_rules(size.caches, size.values, mutant)?.with_symmetry(size.symmetry))
    }
}

/// German's rules with `mutant`, or an error listing the mutants.
fn german_rules(clients: usize, values: usize, mutant: Option<&str>) -> Result<German, ParamError> {
    let names: Vec<&str> = GermanFamily::MUTANTS.iter().map(|m| m.0).collect();
    German::with_mutant(clients, values, mutant)
        .map_err(|e| ParamError::new("mutant", format!("{e}; expected one of {}", names.join(", "))))
}
