"""People, routing and policies (behavior.md R2–R5), as plain Python on an injected clock.

Which rule a question matches, who sees it, when it widens, how a quorum's votes
add up and what a rule answers by itself are decided here, without processes, a
store or a door: `policy_file` reads a policy (TOML), `decisions.decide` picks the
rule for one question, `timeline` says what is due as time passes, `quorum` counts
votes. The store keeps only what must be atomic across hosts (one live answer, one
vote per person, one escalation step); the host records and routes what this room
decides. It imports `core` (the clock, the question record) and `protocol` at most.
"""
