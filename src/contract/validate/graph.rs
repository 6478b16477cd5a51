//! The batch as a whole: unique ids, known deps, no dependency cycle, and quorum bounds.
//! Does not look inside one entry's fields.

use std::collections::HashMap;

use serde_json::Value;

use super::Validator;

impl Validator {
    /// Unique ids, known non-self deps, and no cycle (first found, in delegation order).
    pub(super) fn graph(&mut self, ids: &[Option<&str>], deps: &[Vec<String>]) {
        let mut index: HashMap<&str, usize> = HashMap::new();
        for id in ids.iter().flatten() {
            if index.contains_key(id) {
                self.err(format!("delegation id {id:?} is not unique"));
            } else {
                index.insert(id, index.len());
            }
        }
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
        let position: HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .rev()
            .filter_map(|(i, id)| id.map(|id| (id, i)))
            .collect();
        for (i, id) in ids.iter().enumerate() {
            let Some(id) = id else { continue };
            for dep in &deps[i] {
                if dep == id {
                    self.err(format!("delegation {id:?} depends on itself"));
                } else if let Some(&j) = position.get(dep.as_str()) {
                    edges[i].push(j);
                } else {
                    self.err(format!("delegation {id:?} references unknown dep {dep:?}"));
                }
            }
        }
        if let Some(cycle) = find_cycle(&edges) {
            let names: Vec<&str> = cycle.iter().map(|&i| ids[i].unwrap_or("")).collect();
            self.err(format!(
                "delegations form a dependency cycle: {}",
                names.join(" -> ")
            ));
        }
    }

    /// K (the largest quorum of a quorum-tagged leg) may not exceed the batch size.
    pub(super) fn quorum_bound(&mut self, items: &[Value]) {
        let k = items
            .iter()
            .filter(|d| {
                d.get("synthesis_rule")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.trim().eq_ignore_ascii_case("quorum"))
            })
            .filter_map(|d| d.get("quorum").and_then(Value::as_u64))
            .filter(|k| *k > 0)
            .max();
        if let Some(k) = k
            && k as usize > items.len()
        {
            self.err(format!(
                "synthesis_rule quorum requires quorum ({k}) to be <= the number of delegations ({})",
                items.len()
            ));
        }
    }
}

/// A delegation's string deps, trimmed, blanks dropped; other elements are field errors.
pub(super) fn raw_deps(item: &Value) -> Vec<String> {
    item.get("deps")
        .and_then(Value::as_array)
        .map(|deps| {
            deps.iter()
                .filter_map(Value::as_str)
                .map(|d| d.trim().to_owned())
                .filter(|d| !d.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The first cycle met by a depth-first walk in index order, closed (`a, b, a`).
pub(super) fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; edges.len()];
    for root in 0..edges.len() {
        if marks[root] != Mark::New {
            continue;
        }
        // Iterative walk: (node, next edge to follow); `path` mirrors the stack.
        let mut stack = vec![(root, 0usize)];
        marks[root] = Mark::OnPath;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match marks[to] {
                    Mark::OnPath => {
                        let from = stack.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[from..].iter().map(|&(n, _)| n).collect();
                        cycle.push(to);
                        return Some(cycle);
                    }
                    Mark::New => {
                        marks[to] = Mark::OnPath;
                        stack.push((to, 0));
                    }
                    Mark::Done => {}
                }
            } else {
                marks[node] = Mark::Done;
                stack.pop();
            }
        }
    }
    None
}
