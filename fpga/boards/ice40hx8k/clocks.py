# nextpnr-ice40 --pre-pack: the clocks and their targets, in MHz.
# The Pentium bus runs at up to 66.67 MHz (15 ns); the FT2232H's CLKOUT is
# 60 MHz. make fpga-synth fails when either is missed.
ctx.addClock("bus_clk", 66.67)
ctx.addClock("ft_clk", 60)
