`default_nettype none
// The bach capture board: an iCE40HX8K-CT256 between a Pentium (P54C,
// 3.3 V bus, up to 66 MHz) and an FTDI FT2232H Mini-Module in 245
// synchronous FIFO mode (channel A). Pins: bach.pcf; the wiring and the
// timing budget: docs/fpga.md.
//
// The bus pins are registered in their I/O cells on the CPU clock, so
// every pin is taken at the same instant after the clock edge; the FT2232H
// outputs are registered in theirs on CLKOUT, for the shortest
// clock-to-output time against the chip's 8 ns setup.
module top (
	input  wire        bus_clk,	// CPU CLK (GBIN)
	input  wire        bus_ads_n,
	input  wire [31:3] bus_a,
	input  wire [7:0]  bus_be_n,
	input  wire        bus_mio,
	input  wire        bus_dc,
	input  wire        bus_wr,
	input  wire        bus_cache_n,
	input  wire        bus_brdy_n,
	input  wire        bus_na_n,
	input  wire        bus_ken_n,
	input  wire        bus_boff_n,
	input  wire        bus_hlda,
	input  wire        bus_ahold,	// the chipset's AHOLD, EADS#, HITM#
	input  wire        bus_eads_n,	// (docs/fpga.md 3: a writeback
	input  wire        bus_hitm_n,	// under AHOLD, at the inquire's line)
	output wire        bus_hold,	// to HOLD (the only stall: docs/fpga.md 5)

	input  wire        ft_clk,	// FT2232H CLKOUT, 60 MHz (GBIN)
	input  wire        ft_rxf_n,
	input  wire        ft_txe_n,
	output wire        ft_rd_n,
	output wire        ft_wr_n,
	output wire        ft_oe_n,
	output wire        ft_siwu_n,
	inout  wire [7:0]  ft_d,

	output wire        led_run	// lit while a capture runs
);
	// power-on reset on the USB clock: 16 clocks
	reg [4:0] u_por = 5'd0;
	wire      u_rst = !u_por[4];

	always @(posedge ft_clk)
		if (u_rst)
			u_por <= u_por + 5'd1;

	// bus pins: input registers in the I/O cells
	wire [31:3] a_q;
	wire [7:0]  be_q;
	wire [9:0]  c_q;	// ADS# M/IO# D/C# W/R# CACHE# BRDY# NA# KEN# BOFF# HLDA
	wire        ahold_q, eads_q, hitm_q;

	genvar i;
	generate
		for (i = 3; i < 32; i = i + 1) begin : bus_a_in
			bus_in io (.clk(bus_clk), .pin(bus_a[i]), .q(a_q[i]));
		end
		for (i = 0; i < 8; i = i + 1) begin : bus_be_in
			bus_in io (.clk(bus_clk), .pin(bus_be_n[i]),
				   .q(be_q[i]));
		end
	endgenerate
	bus_in in_ads (.clk(bus_clk), .pin(bus_ads_n), .q(c_q[9]));
	bus_in in_mio (.clk(bus_clk), .pin(bus_mio), .q(c_q[8]));
	bus_in in_dc (.clk(bus_clk), .pin(bus_dc), .q(c_q[7]));
	bus_in in_wr (.clk(bus_clk), .pin(bus_wr), .q(c_q[6]));
	bus_in in_cache (.clk(bus_clk), .pin(bus_cache_n), .q(c_q[5]));
	bus_in in_brdy (.clk(bus_clk), .pin(bus_brdy_n), .q(c_q[4]));
	bus_in in_na (.clk(bus_clk), .pin(bus_na_n), .q(c_q[3]));
	bus_in in_ken (.clk(bus_clk), .pin(bus_ken_n), .q(c_q[2]));
	bus_in in_boff (.clk(bus_clk), .pin(bus_boff_n), .q(c_q[1]));
	bus_in in_hlda (.clk(bus_clk), .pin(bus_hlda), .q(c_q[0]));
	bus_in in_ahold (.clk(bus_clk), .pin(bus_ahold), .q(ahold_q));
	bus_in in_eads (.clk(bus_clk), .pin(bus_eads_n), .q(eads_q));
	// HITM#: an EADS# while it is low is ignored (Pentium 241428)
	bus_in in_hitm (.clk(bus_clk), .pin(bus_hitm_n), .q(hitm_q));

	// FT2232H outputs: registered in the I/O cells on CLKOUT
	localparam [5:0] OUT_REG = 6'b010101;	// registered output
	localparam [5:0] BIDI = 6'b110101;	// registered output and enable
	wire       rd_n_d, wr_n_d, oe_n_d, siwu_n_d, data_oe_d;
	wire [3:0] unused_in;		// output-only cells read nothing
	wire [7:0] data_d, data_in;
	wire       rd_n_q, wr_n_q, oe_n_q, siwu_n_q, data_oe_q;
	wire [7:0] data_q;

	SB_IO #(.PIN_TYPE(OUT_REG)) io_rd (.PACKAGE_PIN(ft_rd_n),
		.INPUT_CLK(1'b0), .OUTPUT_CLK(ft_clk), .OUTPUT_ENABLE(1'b0),
		.D_OUT_0(rd_n_d), .D_IN_0(unused_in[0]));
	SB_IO #(.PIN_TYPE(OUT_REG)) io_wr (.PACKAGE_PIN(ft_wr_n),
		.INPUT_CLK(1'b0), .OUTPUT_CLK(ft_clk), .OUTPUT_ENABLE(1'b0),
		.D_OUT_0(wr_n_d), .D_IN_0(unused_in[1]));
	SB_IO #(.PIN_TYPE(OUT_REG)) io_oe (.PACKAGE_PIN(ft_oe_n),
		.INPUT_CLK(1'b0), .OUTPUT_CLK(ft_clk), .OUTPUT_ENABLE(1'b0),
		.D_OUT_0(oe_n_d), .D_IN_0(unused_in[2]));
	SB_IO #(.PIN_TYPE(OUT_REG)) io_siwu (.PACKAGE_PIN(ft_siwu_n),
		.INPUT_CLK(1'b0), .OUTPUT_CLK(ft_clk), .OUTPUT_ENABLE(1'b0),
		.D_OUT_0(siwu_n_d), .D_IN_0(unused_in[3]));

	generate
		for (i = 0; i < 8; i = i + 1) begin : ft_data
			SB_IO #(.PIN_TYPE(BIDI)) io (.PACKAGE_PIN(ft_d[i]),
				.INPUT_CLK(1'b0), .OUTPUT_CLK(ft_clk),
				.OUTPUT_ENABLE(data_oe_d),
				.D_OUT_0(data_d[i]), .D_IN_0(data_in[i]));
		end
	endgenerate

	wire hold, run_led;

	bach_core #(
		.SERIAL("0001"),
		.NAME("bach capture board iCE40HX8K")
	) core (
		.i_bclk(bus_clk), .i_uclk(ft_clk), .i_rst(u_rst),
		.i_ads_n(c_q[9]), .i_a(a_q), .i_be_n(be_q),
		.i_mio(c_q[8]), .i_dc(c_q[7]), .i_wr(c_q[6]),
		.i_cache_n(c_q[5]), .i_brdy_n(c_q[4]), .i_na_n(c_q[3]),
		.i_ken_n(c_q[2]), .i_boff_n(c_q[1]), .i_hlda(c_q[0]),
		.i_ahold(ahold_q), .i_eads_n(eads_q), .i_hitm_n(hitm_q),
		.o_hold(hold),
		.i_ft_rxf_n(ft_rxf_n), .i_ft_txe_n(ft_txe_n),
		.i_ft_data(data_in),
		.o_ft_rd_n(rd_n_q), .o_ft_wr_n(wr_n_q), .o_ft_oe_n(oe_n_q),
		.o_ft_siwu_n(siwu_n_q), .o_ft_data(data_q),
		.o_ft_data_oe(data_oe_q),
		.o_ft_rd_n_d(rd_n_d), .o_ft_wr_n_d(wr_n_d),
		.o_ft_oe_n_d(oe_n_d), .o_ft_siwu_n_d(siwu_n_d),
		.o_ft_data_d(data_d), .o_ft_data_oe_d(data_oe_d),
		.o_running(run_led));

	assign bus_hold = hold;
	assign led_run = run_led;

	// the core's own copies of the pin registers are left to synthesis
	wire unused_copies = &{1'b0, rd_n_q, wr_n_q, oe_n_q, siwu_n_q,
			       data_q, data_oe_q, hitm_q};
endmodule

