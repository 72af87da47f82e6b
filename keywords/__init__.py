"""The keyword language: how customers' WhatsApp words are read (case, accents, plurals,
stretched letters, abbreviations) and what a skill's keyword may say (stems, `#`, alternatives).
Pure; the package parser checks keywords with it and the matcher matches with it."""
