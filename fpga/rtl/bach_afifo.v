`default_nettype none
// bach_afifo: a FIFO from the bus clock into the USB clock, in block RAM,
// 2^AW entries: the record FIFO, and the boundary FIFO beside it. Pointers
// are AW+1 bits (the top bit tells full from empty) and cross the clock
// domains in Gray code through two flip-flops, so a pointer seen on the
// other side is always one it really held: a little old, never wrong. Each
// side turns the other's pointer back into binary in a register of its
// own, and the writer's fill count is a register too: they are a few
// clocks old, and the writer keeps a few entries of slack for that.
//
// The read side is not a queue but a window: the reader reads any entry
// between its free pointer and the write pointer it sees (a frame's
// records are read twice when deltas go first), and frees entries by
// moving i_rfree forward. o_rdata is the entry at i_raddr one clock later.
module bach_afifo #(
	parameter AW = 10,
	parameter DW = 64
) (
	input  wire          i_wclk,
	input  wire          i_we,		// write i_wdata (never when full)
	input  wire [DW-1:0] i_wdata,
	output reg  [AW:0]   o_wfill = 0,	// entries not yet freed, lately

	input  wire          i_rclk,
	output reg  [AW:0]   o_rwptr = 0,	// write pointer, lately
	input  wire [AW:0]   i_rfree,	// entries before this one are free
	input  wire [AW-1:0] i_raddr,
	output reg  [DW-1:0] o_rdata
);
	function [AW:0] to_gray(input [AW:0] b);
		to_gray = b ^ (b >> 1);
	endfunction

	function [AW:0] from_gray(input [AW:0] g);
		integer i;
		begin
			from_gray[AW] = g[AW];
			for (i = AW - 1; i >= 0; i = i - 1)
				from_gray[i] = from_gray[i + 1] ^ g[i];
		end
	endfunction

	reg [DW-1:0] mem [0:(1 << AW) - 1];

	// write side (bus clock)
	reg  [AW:0] b_wptr = 0;		// binary write pointer
	reg  [AW:0] b_wgray = 0;	// the same in Gray code, to the reader
	reg  [AW:0] b_rptr = 0;		// reader's free pointer, in binary
	wire [AW:0] b_rgray;

	always @(posedge i_wclk)
		if (i_we)
			mem[b_wptr[AW-1:0]] <= i_wdata;

	always @(posedge i_wclk) begin
		if (i_we) begin
			b_wptr <= b_wptr + 1'b1;
			b_wgray <= to_gray(b_wptr + 1'b1);
		end
		b_rptr <= from_gray(b_rgray);
		o_wfill <= b_wptr - b_rptr;
	end

	// read side (USB clock)
	reg  [AW:0] u_rgray = 0;	// i_rfree in Gray code, to the writer
	wire [AW:0] u_wgray;

	always @(posedge i_rclk) begin
		u_rgray <= to_gray(i_rfree);
		o_rwptr <= from_gray(u_wgray);
		o_rdata <= mem[i_raddr];
	end

	bach_sync #(.W(AW + 1)) sync_w (.i_clk(i_rclk), .i_d(b_wgray),
					.o_q(u_wgray));
	bach_sync #(.W(AW + 1)) sync_r (.i_clk(i_wclk), .i_d(u_rgray),
					.o_q(b_rgray));
endmodule
