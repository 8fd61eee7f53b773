"""What the cited reference tables say of a candidate: its GPUs' and server's embodied
emissions (`embodied`), whether its model is in the models table (`models`), and the
regulatory gates' rules and the sovereignty framework's objectives (`regulation`)."""
