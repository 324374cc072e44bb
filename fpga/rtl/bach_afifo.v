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

`ifdef FORMAL
	wire [AW:0] f_wmeta, f_rmeta;	// the synchronisers' first stages

	bach_sync #(.W(AW + 1)) sync_w (.i_clk(i_rclk), .i_d(b_wgray),
					.o_q(u_wgray), .f_meta(f_wmeta));
	bach_sync #(.W(AW + 1)) sync_r (.i_clk(i_wclk), .i_d(u_rgray),
					.o_q(b_rgray), .f_meta(f_rmeta));
`else
	bach_sync #(.W(AW + 1)) sync_w (.i_clk(i_rclk), .i_d(b_wgray),
					.o_q(u_wgray));
	bach_sync #(.W(AW + 1)) sync_r (.i_clk(i_wclk), .i_d(u_rgray),
					.o_q(b_rgray));
`endif

`ifdef FORMAL
	// ---- properties (make fpga-formal: fpga/bench/formal/afifo.ys) ------
	//
	// Two clocks of any phases and ratio (clk2fflogic: the solver steps
	// both). The environment: the writer writes only when the FIFO as it
	// sees it has room; the reader frees entries one at a time, only
	// entries it has seen.
	localparam [AW:0] F_SIZE = 1 << AW;
	reg [AW:0] f_rfree = 0;		// i_rfree at the last read clock

	always @(posedge i_rclk)
		f_rfree <= i_rfree;

	always @* begin
		if (i_we)
			assume(b_wptr - b_rptr < F_SIZE);
		assume(i_rfree == f_rfree || i_rfree == f_rfree + 1'b1);
		assume(o_rwptr - i_rfree <= F_SIZE);
	end

	// Each side sees the other's pointer late, never ahead. Along the
	// way round, every copy of a pointer is at or behind the one it was
	// taken from, and the whole way round is at most 2^AW entries long:
	// the writer's free pointer, its two synchroniser stages, the
	// reader's free pointer as registered and as now, the write pointer
	// the reader has, its two stages, the write pointer. So the FIFO is
	// never fuller than full, the reader never sees more than was
	// written, and full and empty (a fill of 2^AW and of 0) are never at
	// once.
	wire [AW:0] f_wm = from_gray(f_wmeta), f_wq = from_gray(u_wgray);
	wire [AW:0] f_rm = from_gray(f_rmeta), f_rq = from_gray(b_rgray);
	wire [AW+4:0] f_round = {4'd0, f_rq - b_rptr} + {4'd0, f_rm - f_rq} +
				{4'd0, f_rfree - f_rm} +
				{4'd0, i_rfree - f_rfree} +
				{4'd0, o_rwptr - i_rfree} +
				{4'd0, f_wq - o_rwptr} + {4'd0, f_wm - f_wq} +
				{4'd0, b_wptr - f_wm};

	always @* begin
		assert(f_round <= {4'd0, F_SIZE});
		assert(b_wgray == to_gray(b_wptr));
		assert(u_rgray == to_gray(f_rfree));
		assert(o_wfill <= F_SIZE);
	end

	// Gray pointers change one bit a step: each against its value
	// before its clock's last edge
	reg [AW:0] f_wg = 0, f_rg = 0;

	always @(posedge i_wclk)
		f_wg <= b_wgray;

	always @(posedge i_rclk)
		f_rg <= u_rgray;

	always @* begin
		assert(f_wg == b_wgray || $onehot(f_wg ^ b_wgray));
		assert(f_rg == u_rgray || $onehot(f_rg ^ u_rgray));
		// (for the induction: the pointers they were)
		assert(f_wg == to_gray(b_wptr) || f_wg == to_gray(b_wptr - 1'b1));
		assert(f_rg == to_gray(f_rfree) ||
		       f_rg == to_gray(f_rfree - 1'b1));
	end

	// One record, the write at pointer f_p: from the clock the reader
	// sees it until it frees it, it stays where it was written, as it
	// was written; so none is lost, overwritten, duplicated or moved.
	(* anyconst *) reg [AW:0] f_p;
	reg [DW-1:0] f_d = 0;
	reg f_wrote = 1'b0;

	always @(posedge i_wclk)
		if (i_we && b_wptr == f_p) begin
			f_wrote <= 1'b1;
			f_d <= i_wdata;
		end

	// f_p is in the reader's window: seen and not yet freed (as of its
	// last clock)
	wire f_in_window = (f_p - f_rfree) < (o_rwptr - f_rfree);

	// what the reader read at its last clock: f_p, in its window
	reg f_read = 1'b0;

	always @(posedge i_rclk)
		f_read <= f_in_window && i_raddr == f_p[AW-1:0];

	always @* begin
		if (f_in_window)
			assert(f_wrote && mem[f_p[AW-1:0]] == f_d);
		// written and not freed: it is still in the RAM, as written
		if ((f_p - b_rptr) < (b_wptr - b_rptr))
			assert(f_wrote && mem[f_p[AW-1:0]] == f_d);
		// and what the reader reads of it is it
		if (f_read && f_in_window)
			assert(o_rdata == f_d);
	end

	// ---- covers (make fpga-formal runs them: each must be reached) -----
	// The FIFO full as the writer sees it, and as the reader does; the
	// tracked record read back; the FIFO empty again after it wrapped
	// round (every entry written once and freed) as both sides see it.
	always @* begin
		cover(b_wptr - b_rptr == F_SIZE);
		cover(o_rwptr - i_rfree == F_SIZE);
		cover(f_read && f_in_window && f_wrote);
		cover(b_wptr[AW] && b_wptr == b_rptr && o_wfill == 0 &&
		      o_rwptr == i_rfree);
	end
`endif
endmodule
