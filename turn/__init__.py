"""One agent turn: skill index, matcher, prompt, model, tools, activations, outbox."""
