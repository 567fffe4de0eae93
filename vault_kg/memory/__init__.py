"""Services: session memory (the session brief, push-recall, the recall log and ledger, credit for anchored notes, the write guardrails)."""
