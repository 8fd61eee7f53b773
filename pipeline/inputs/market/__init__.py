"""What the market of a vintage gives a candidate: the market read once per run from the store
(`read`), a candidate's cost and capacity (`cost`: an offer's hourly price, a TCO profile's
lines, an API's token prices), its zone's electricity price and grid intensity (`zones`),
declared amounts in other currencies in EUR (`currency`), and a proposal's `[[scan]]`s
expanded into one candidate per fitting offer (`scan`)."""
