"""Rehearsal: a change to an org's skills tried on its own customer messages before it goes
live (what it would gain, lose or move), by the turn's own matcher.

`replay` is the pure core (bursts and two skill sets in, counts and samples out), `bursts`
groups messages as the turn answered them, `changes` turns a draft, a proposal, a typed skill
or an uninstall into the changed set, `queries` reads, `run` puts them together off the
event loop under a per-org lock, `confirmation` says when an approval must be confirmed.
"""
