"""The protocol: constants, records, judge tasks and answers, prompt fields."""
