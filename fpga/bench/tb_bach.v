`timescale 1ps / 1ps
`default_nettype none
// tb_bach: the capture board's gateware (bach_core) between a Pentium bus
// model and an FT2232H model, driven by a script (tbgen.c):
//
//   +dir=DIR   reads DIR/script.txt and DIR/cycles.hex; writes
//              DIR/stream.bin, the bytes the board wrote to the FT2232H
//              (what the host reads), DIR/ts.txt (the ADS# clock of each
//              cycle, from the bus model) and DIR/summary.txt (what the
//              testbench measured: the hold output, protocol errors)
//   +vcd=FILE  the bus pins as a VCD (pentium_bus.v)
//   +nobclk    no bus clock at all, as with no CPU attached
//   +deaf      the CPU ignores the hold output
//
// The checks on the stream are check_stream's; this bench checks the pins:
// the FT2232H protocol (RD# only with OE#, no two drivers on the data bus)
// and that every script step finished in time. It prints PASS or FAIL last.
//
// Clocks: bus 66.67 MHz (15 ns), FT2232H CLKOUT 60 MHz (16.666 ns), so the
// two drift through every phase. The FT2232H model takes a byte at each
// rising edge where WR# and TXE# are low, and gives one where RD# and RXF#
// are; TXE# rises now and then as the chip's buffer fills, and for whole
// stretches when the script says the host stops reading.
module tb_bach;
	localparam BCLK_HALF = 7500, UCLK_HALF = 8333;

	reg bclk = 1'b0, uclk = 1'b0;
	reg bclk_on = 1'b1;		// +nobclk: no CPU, no bus clock

	initial
		if ($test$plusargs("nobclk"))
			bclk_on = 1'b0;

	always #(BCLK_HALF) bclk = ~bclk & bclk_on;
	always #(UCLK_HALF) uclk = ~uclk;

	integer errors = 0;
	reg [8*256-1:0] dir, path;

	// ---- the bus ----------------------------------------------------------
	reg         play = 1'b0;
	reg  [31:0] ncyc = 32'd0;
	wire        bus_done;
	wire [31:0] completed, offbus;
	wire        ads_n, mio, dc, wr, cache_n, brdy_n, na_n, ken_n, boff_n;
	wire        lock_n, hlda, hold, ahold, eads_n, hitm_n, scyc;
	wire [31:3] a;
	wire [7:0]  be_n;

	pentium_bus cpu (.clk(bclk), .hold(hold), .play(play), .ncyc(ncyc),
		.done(bus_done), .completed(completed), .offbus(offbus),
		.ads_n(ads_n), .a(a), .be_n(be_n), .mio(mio), .dc(dc), .wr(wr),
		.cache_n(cache_n), .brdy_n(brdy_n), .na_n(na_n), .ken_n(ken_n),
		.boff_n(boff_n), .lock_n(lock_n), .hlda(hlda), .ahold(ahold),
		.eads_n(eads_n), .hitm_n(hitm_n), .scyc(scyc));

	// SCYC on the model's pins, checked from the data sheets alone
	// (docs/decoding.md, "SCYC"; tests/unit/test_busdecode.c check_scyc
	// on lib/bus/busmodel.c): taking a locked sequence as a run of
	// clocks with the CPU on the bus (no HLDA, no BOFF# in this clock or
	// the one before) and LOCK# low [K6 5.32], SCYC is high at its first
	// ADS# exactly when it has more than two ADS#s, low at its others
	// [P5, SCYC], and steady from a locked cycle's ADS# to its BRDY# [K5
	// 5.2.46]; where LOCK# is high it means nothing, and is not checked
	reg     sc_boff_n = 1'b1, sc_hlda = 1'b0, sc_first = 1'b0;
	reg     sc_level = 1'b0, sc_open = 1'b0, sc_off, sc_lock, sc_ads;
	integer sc_nads = 0, sc_split = 0;
	time    sc_first_t = 0;

	always @(posedge bclk) begin
		// the pins as they stood before this edge
		sc_off = hlda || !boff_n || (!sc_boff_n && !sc_hlda);
		sc_lock = !sc_off && !lock_n;
		sc_ads = !sc_off && !ads_n;
		if (!sc_lock && sc_nads > 0) begin
			if (sc_first != (sc_nads > 2)) begin
				$display("FAIL: SCYC %0s at the first ADS# (%0t ps) of a locked sequence of %0d cycles",
					 sc_first ? "high" : "low", sc_first_t,
					 sc_nads);
				errors = errors + 1;
			end
			if (sc_nads > 2)
				sc_split = sc_split + 1;
			sc_nads = 0;
		end
		if (!sc_lock) begin
			sc_open = 1'b0;
		end else begin
			if (sc_open && scyc !== sc_level) begin
				$display("FAIL: SCYC changed inside a locked cycle (%0t ps)",
					 $time);
				errors = errors + 1;
			end
			if (sc_ads) begin
				if (sc_nads == 0) begin
					sc_first = scyc;
					sc_first_t = $time;
				end else if (scyc) begin
					$display("FAIL: SCYC high at ADS# number %0d of a locked sequence (%0t ps)",
						 sc_nads + 1, $time);
					errors = errors + 1;
				end
				sc_nads = sc_nads + 1;
				sc_open = 1'b1;
				sc_level = scyc;
			end
			if (!brdy_n)
				sc_open = 1'b0;
		end
		sc_boff_n = boff_n;
		sc_hlda = hlda;
	end

	// the registers in the board's I/O cells
	reg        p_ads_n, p_mio, p_dc, p_wr, p_cache_n, p_brdy_n, p_na_n;
	reg        p_ken_n, p_boff_n, p_hlda, p_ahold, p_eads_n, p_hitm_n;
	reg [31:3] p_a;
	reg [7:0]  p_be_n;

	always @(posedge bclk)
		{p_ads_n, p_a, p_be_n, p_mio, p_dc, p_wr, p_cache_n, p_brdy_n,
		 p_na_n, p_ken_n, p_boff_n, p_hlda, p_ahold, p_eads_n, p_hitm_n} <=
			{ads_n, a, be_n, mio, dc, wr, cache_n, brdy_n, na_n,
			 ken_n, boff_n, hlda, ahold, eads_n, hitm_n};

	// the hold output, as the CPU sees it
	integer hold_clocks = 0, hold_episodes = 0;
	reg     hold_last = 1'b0;

	always @(posedge bclk) begin
		if (hold)
			hold_clocks = hold_clocks + 1;
		if (hold && !hold_last)
			hold_episodes = hold_episodes + 1;
		hold_last = hold;
	end

	// ---- the board --------------------------------------------------------
	reg        rst = 1'b1;
	reg        txe_n = 1'b1, rxf_n = 1'b1;
	reg  [7:0] ft_q;		// the chip's output register
	reg        ft_drive = 1'b0;	// the chip drives the data bus
	wire       rd_n, wr_n, oe_n, siwu_n, data_oe, running;
	wire [7:0] data_out;
	wire [7:0] data = data_oe ? data_out : ft_drive ? ft_q : 8'hxx;

	// GATE: the netlist of make fpga-gatesim, synthesized with these
	// parameters (fpga.mk)
`ifdef GATE
	bach_core dut (
`else
	bach_core #(
		.METER_RES(10000),
		.SERIAL("SIM0"),
		.NAME("bach capture board (simulation)")
	) dut (
`endif
		.i_bclk(bclk), .i_uclk(uclk), .i_rst(rst),
		.i_ads_n(p_ads_n), .i_a(p_a), .i_be_n(p_be_n), .i_mio(p_mio),
		.i_dc(p_dc), .i_wr(p_wr), .i_cache_n(p_cache_n),
		.i_brdy_n(p_brdy_n), .i_na_n(p_na_n), .i_ken_n(p_ken_n),
		.i_boff_n(p_boff_n), .i_hlda(p_hlda), .i_ahold(p_ahold),
		.i_eads_n(p_eads_n), .i_hitm_n(p_hitm_n), .o_hold(hold),
		.o_running(running),
		.i_ft_rxf_n(rxf_n), .i_ft_txe_n(txe_n), .i_ft_data(data),
		.o_ft_rd_n(rd_n), .o_ft_wr_n(wr_n), .o_ft_oe_n(oe_n),
		.o_ft_siwu_n(siwu_n), .o_ft_data(data_out),
		.o_ft_data_oe(data_oe),
		.o_ft_rd_n_d(), .o_ft_wr_n_d(), .o_ft_oe_n_d(),
		.o_ft_siwu_n_d(), .o_ft_data_d(), .o_ft_data_oe_d());

	// ---- the FT2232H --------------------------------------------------------
	reg  [7:0] rxq [0:4095];	// host to board, not yet read
	integer    rx_head = 0, rx_tail = 0;
	integer    stream = 0, nbytes = 0, siwu = 0;
	integer    pause_every = 0, pause_len = 0, pause_left = 0;
	integer    tick = 0, packet = 0, blip = 0;
	// the link's use: clocks with TXE# low and bytes written, from the
	// first data frame on, until the last byte
	integer    ready_clocks = 0, ready_bytes = 0, ready_mark = 0;
	integer    bytes_mark = 0;
	reg        counting = 1'b0;
	integer    mark_byte = 0;	// where the capture checked in full starts

	// the frames on the way to the host: which replies went by
	integer    f_pos = 0, n_ack = 0, n_ident = 0, n_status = 0;
	reg [31:0] f_len = 0;
	reg [7:0]  f_type = 0;

	task track(input [7:0] b);
		begin
			if (f_pos == 5)
				f_type = b;
			if (f_pos >= 12 && f_pos < 16)
				f_len[8 * (f_pos - 12) +: 8] = b;
			f_pos = f_pos + 1;
			if (f_pos >= 16 && f_pos == 44 + f_len) begin
				if (f_type == 8'd2) n_status = n_status + 1;
				if (f_type == 8'd3) n_ident = n_ident + 1;
				if (f_type == 8'd4) n_ack = n_ack + 1;
				f_pos = 0;
			end
		end
	endtask

	always @(posedge uclk) begin
		// this edge, with the pins as they were before it
		if (!wr_n && !txe_n) begin
			if (!data_oe) begin
				$display("FAIL: WR# low with the bus not driven");
				errors = errors + 1;
			end
			$fwrite(stream, "%c", data_out);
			track(data_out);
			if (f_pos == 6 && f_type == 8'd1)
				counting = 1'b1;
			if (counting) begin
				ready_bytes = ready_bytes + 1;
				ready_mark = ready_clocks;
				bytes_mark = ready_bytes;
			end
			nbytes = nbytes + 1;
			packet = packet + 1;
		end
		if (!rd_n && !rxf_n) begin
			if (oe_n) begin
				$display("FAIL: RD# low without OE#");
				errors = errors + 1;
			end
			rx_head = rx_head + 1;
		end
		if (data_oe && !oe_n) begin
			$display("FAIL: the board drives the bus with OE# low");
			errors = errors + 1;
		end
		if (!siwu_n)
			siwu = siwu + 1;
		if (counting && !txe_n)
			ready_clocks = ready_clocks + 1;
		// then the chip's outputs change
		#1000;
		tick = tick + 1;
		if (pause_every != 0 && tick % pause_every == 0)
			pause_left = pause_len;
		if (pause_left > 0)
			pause_left = pause_left - 1;
		// the chip's buffer is full for a few clocks after a packet,
		// and now and then for one
		if (packet >= 512) begin
			packet = 0;
			blip = $urandom % 6;
		end else if (blip > 0) begin
			blip = blip - 1;
		end else if ($urandom % 16 == 0) begin
			blip = 1;
		end
		txe_n = pause_left > 0 || blip > 0;
		rxf_n = rx_head == rx_tail;
		ft_drive = !oe_n;
		ft_q = rxq[rx_head % 4096];
	end

	// ---- the script ---------------------------------------------------------
	integer    sf, rc, n, k, every, len, wait_ack, wait_ident, wait_status;
	integer    step = 0;
	reg [8*16-1:0]  op;
	reg [8*8-1:0]   wait_for;
	reg [8*256-1:0] bytes;		// a frame to send, first byte high

	task fail(input [8*64-1:0] why);
		begin
			$display("FAIL: %0s (script step %0d, %0t ps)", why, step,
				 $time);
			errors = errors + 1;
		end
	endtask

	// queue n bytes for the board (bytes holds them, first byte high)
	task send(input integer count);
		integer j;
		begin
			for (j = 0; j < count; j = j + 1) begin
				rxq[rx_tail % 4096] = bytes[8 * (count - 1 - j) +: 8];
				rx_tail = rx_tail + 1;
			end
		end
	endtask

	// wait for the reply: A an ACK, I an IDENTITY, S a STATUS, 0 none
	integer reply_limit = 1000000;	// USB clocks a reply may take

	task reply(input [7:0] w);
		integer t;
		begin
			wait_ack = n_ack;
			wait_ident = n_ident;
			wait_status = n_status;
			if (w == "0" || w == "N") begin
				repeat (3000) @(posedge uclk);
				if (w == "N" && (n_ack != wait_ack ||
				    n_ident != wait_ident ||
				    n_status != wait_status))
					fail("a reply to a frame to be ignored");
			end else begin
				t = 0;
				while (t < reply_limit &&
				       !(w == "A" && n_ack != wait_ack) &&
				       !(w == "I" && n_ident != wait_ident) &&
				       !(w == "S" && n_status != wait_status)) begin
					@(posedge uclk);
					t = t + 1;
				end
				if (t == reply_limit)
					fail("no reply");
			end
		end
	endtask

	initial begin
		if ($value$plusargs("reply_limit=%d", n))
			reply_limit = n;
		if (!$value$plusargs("dir=%s", dir)) begin
			$display("FAIL: +dir=DIR missing");
			$finish;
		end
		$sformat(path, "%0s/script.txt", dir);
		sf = $fopen(path, "r");
		$sformat(path, "%0s/stream.bin", dir);
		stream = $fopen(path, "wb");
		if (sf == 0 || stream == 0) begin
			$display("FAIL: cannot open the files in %0s", dir);
			$finish;
		end
		repeat (20) @(posedge uclk);
		rst = 1'b0;
		repeat (20) @(posedge uclk);

		op = "";
		while (op != "end") begin
			rc = $fscanf(sf, "%s", op);
			step = step + 1;
			if (rc != 1) begin
				fail("script: unexpected end");
				op = "end";
			end else if (op == "raw" || op == "cmd") begin
				rc = $fscanf(sf, "%s %d %h", wait_for, n, bytes);
				send(n);
				reply(wait_for[7:0]);
			end else if (op == "pause") begin
				rc = $fscanf(sf, "%d %d", every, len);
				pause_every = every;
				pause_len = len;
			end else if (op == "bus") begin
				rc = $fscanf(sf, "%d", n);
				ncyc = n;
				play = 1'b1;
			end else if (op == "buswait") begin
				k = 0;
				while (!bus_done && k < 50000000) begin
					@(posedge bclk);
					k = k + 1;
				end
				if (!bus_done)
					fail("the bus model did not finish");
			end else if (op == "mark") begin
				// what comes next is checked in full: count the
				// hold output and the link from here
				mark_byte = nbytes;
				hold_clocks = 0;
				hold_episodes = 0;
				counting = 1'b0;
				ready_clocks = 0;
				ready_bytes = 0;
			end else if (op == "idle") begin
				rc = $fscanf(sf, "%d", n);
				repeat (n) @(posedge uclk);
			end else if (op != "end") begin
				fail("script: unknown step");
				op = "end";
			end
		end
		repeat (100) @(posedge uclk);
		$fclose(stream);

		$sformat(path, "%0s/summary.txt", dir);
		sf = $fopen(path, "w");
		$fwrite(sf, "cycles %0d\n", completed);
		$fwrite(sf, "offbus %0d\n", offbus);
		$fwrite(sf, "hold_episodes %0d\n", hold_episodes);
		$fwrite(sf, "hold_clocks %0d\n", hold_clocks);
		$fwrite(sf, "bytes %0d\n", nbytes);
		$fwrite(sf, "siwu %0d\n", siwu);
		$fwrite(sf, "ready_clocks %0d\n", ready_mark);
		$fwrite(sf, "ready_bytes %0d\n", bytes_mark);
		$fwrite(sf, "mark_byte %0d\n", mark_byte);
		$fwrite(sf, "split_locked %0d\n", sc_split);
		$fwrite(sf, "errors %0d\n", errors);
		$fclose(sf);
		$display("tb: %0d bytes, %0d bus cycles, %0d ADS# off the bus, hold %0d times for %0d clocks, SIWU# %0d times; from the first data frame, %0d bytes in %0d clocks with TXE# low",
			 nbytes, completed, offbus, hold_episodes, hold_clocks,
			 siwu, bytes_mark, ready_mark);
		if (errors == 0)
			$display("PASS");
		else
			$display("FAIL: %0d errors", errors);
		$finish;
	end
endmodule
