/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engine of vhca, the HCA model: the contracts between its units.
 *
 *   vhca_rx.c     receive demux: a packet to the completer, the responder,
 *                 UD or a lingering QP
 *   vhca_wqe.c    send WQE reads and completions, the work completion
 *                 opcodes, and the RQ/SRQ WQE take, shared by RC and UD
 *   vhca_tx.c     packet build and transmit, shared by every sender
 *   vhca_send.c   the sender of RC and UC QPs: passes, direct placement,
 *                 the work item, the retransmit and RNR timers, the end of
 *                 the doorbell's poll window
 *   vhca_req.c    RC requester: fetch, packetize, window, fences, READ
 *                 limits, local operations (REG_MR, LOCAL_INV), rewind;
 *                 the UC requester (no ACKs, a WQE completes once its
 *                 packets are built)
 *   vhca_comp.c   RC completer: ACKs, NAKs and READ responses; which
 *                 send WQEs they complete
 *   vhca_resp.c   RC responder: PSN check, SEND and WRITE requests, the
 *                 backlog behind READ responses; the UC responder (SEND
 *                 and WRITE, no answers)
 *   vhca_resp_rd.c  the responder's resources: READ requests and their
 *                 responses, atomics and their kept results
 *   vhca_db.c     the send doorbell's poll window and NEEDS_WAKEUP
 *   vhca_linger.c lingering QPs: destroyed RC QPs answering duplicates
 *   vhca_ud.c     UD and GSI QPs
 *   vhca_engine.c the engine's workqueue and the kick; the setup of a
 *                 device's and a QP's engine
 *
 * The QP verbs (vhca_qp_verbs.c) set up and tear down a QP's engine;
 * vhca_qp.c changes its state, and fails it for the engine's roles.
 *
 * Receive runs in softirq, or, for a packet delivered locally by
 * vhca_net_xmit(), inside the sender with BHs off ("softirq" below means
 * either).  Packets are built under the QP's locks and sent after they are
 * dropped: transmission must not run with interrupts disabled, and a local
 * delivery may come back to the sending QP.
 */
#ifndef VHCA_ENGINE_H
#define VHCA_ENGINE_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "vhca.h"
#include "vhca_pkt.h"

/* The QP's path MTU, payload bytes. */
static inline u32 vhca_qp_mtu(const struct vhca_qp *qp)
{
	return ib_mtu_enum_to_int(qp->attr.path_mtu);
}

/* The UDP source port of the QP's packets, from its flow label. */
static inline u16 vhca_qp_sport(const struct vhca_qp *qp)
{
	return rdma_get_udp_sport(qp->attr.ah_attr.grh.flow_label,
				  qp->ibqp.qp_num, qp->attr.dest_qp_num);
}

/* An 8-byte atomic: one request, answered by its ATOMIC ACKNOWLEDGE. */
static inline bool vhca_wr_atomic(u8 wr_opcode)
{
	return wr_opcode == VHCA_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == VHCA_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * A READ, an atomic, an ATOMIC WRITE or a FLUSH: one request, completed by
 * its responses only (an ATOMIC WRITE's or a FLUSH's: a READ response
 * without payload), held by the responder in one of its max_dest_rd_atomic
 * resources.
 */
static inline bool vhca_wr_rd_atomic(u8 wr_opcode)
{
	return wr_opcode == VHCA_WR_RDMA_READ ||
	       wr_opcode == VHCA_WR_ATOMIC_WRITE ||
	       wr_opcode == VHCA_WR_FLUSH || vhca_wr_atomic(wr_opcode);
}

/* A request that carries no payload: a READ, an atomic or a FLUSH. */
static inline bool vhca_wr_no_payload(u8 wr_opcode)
{
	return wr_opcode == VHCA_WR_RDMA_READ || wr_opcode == VHCA_WR_FLUSH ||
	       vhca_wr_atomic(wr_opcode);
}

/* The engine's copy of the send WQE at ring index (RC, UC). */
static inline struct vhca_swqe *vhca_qp_swqe(const struct vhca_qp *qp,
					     u32 index)
{
	return qp->req.swqe +
	       (size_t)(index & (qp->sq.count - 1)) * qp->req.swqe_stride;
}

/* vhca_tx.c */

/**
 * vhca_tx_build() - allocate and fill a packet's headers
 * @vdev: the sending device
 * @pkt: the transport fields
 * @payload: set to where pkt->paylen payload bytes go (pad follows, zeroed)
 *
 * Return: the skb for vhca_net_xmit(), ERR_PTR(-ENOMEM) when none could be
 * allocated (the packet is lost, as on a congested wire), or
 * ERR_PTR(-EINVAL) when pkt cannot be built (a payload over
 * VHCA_MAX_PKT_PAYLOAD, the largest path MTU, among them).  GFP_ATOMIC:
 * any context.
 */
struct sk_buff *vhca_tx_build(struct vhca_dev *vdev,
			      const struct vhca_pkt *pkt, void **payload);

/**
 * vhca_tx_list() - send packets of an RC QP to its peer
 * @qp: the QP
 * @list: the packets, built under the QP's locks; emptied
 *
 * Called with no QP lock held (a local delivery may come back to @qp).
 *
 * Return: true when a packet took the wire (vhca_net_xmit_list()).
 */
bool vhca_tx_list(struct vhca_qp *qp, struct sk_buff_head *list);

/*
 * Count npkts packets of bytes (BTH through ICRC) from device src to
 * device dst, placed directly (no packet): as delivered in the kernel,
 * and in src's direct_packets.
 */
void vhca_tx_count_direct(struct vhca_dev *src, struct vhca_dev *dst,
			  u32 npkts, u32 bytes);

/**
 * vhca_tx_queue_ack() - an ACK or NAK of the responder onto a list
 * @qp: the QP, its rq_lock held (the AETH carries its MSN)
 * @syndrome: the AETH syndrome
 * @psn: the PSN acknowledged
 * @list: where it goes, for vhca_tx_list()
 */
void vhca_tx_queue_ack(struct vhca_qp *qp, u8 syndrome, u32 psn,
		       struct sk_buff_head *list);

/* vhca_wqe.c */

/**
 * vhca_wqe_read_send() - read a send WQE's common header from its ring slot
 * @qp: the QP
 * @slot: the slot, in memory the provider may write at any time
 * @hdr: the copy; the opcode-specific union is left to the caller
 *
 * Every field is read once.
 *
 * Return: the slot's SGE list or inline data.
 */
const struct vhca_sge *vhca_wqe_read_send(const struct vhca_qp *qp,
					  const struct vhca_send_wqe *slot,
					  struct vhca_send_wqe *hdr);

/**
 * vhca_wqe_read_sges() - copy an SGE list out of a ring slot
 * @dst: the copy
 * @src: the slot's SGEs, read once each
 * @num_sge: how many, already checked against the QP's maximum
 *
 * Return: the bytes they cover.
 */
u64 vhca_wqe_read_sges(struct vhca_sge *dst, const struct vhca_sge *src,
		       u32 num_sge);

/**
 * vhca_wqe_complete_send() - complete the send WQE at sq_tail
 * @qp: the QP, its sq_lock held
 * @hdr: the engine's copy of the WQE's header
 * @opcode: the completion's opcode (enum ib_wc_opcode)
 * @len: the completion's byte_len
 * @status: the completion's status (enum ib_wc_status)
 *
 * The slot is released before the CQE appears (when the WQE is signaled,
 * or failed): a process that polled the CQE may post into it at once.
 */
void vhca_wqe_complete_send(struct vhca_qp *qp, const struct vhca_send_wqe *hdr,
			    u8 opcode, u32 len, u8 status);

/**
 * vhca_wqe_malformed() - count a WQE the engine refused
 * @qp: the QP whose ring held it
 *
 * A send or receive WQE whose fields failed the engine's checks (opcode,
 * flags, SGE count, lengths): the malformed_wqes counter of rdma statistic.
 */
void vhca_wqe_malformed(const struct vhca_qp *qp);

/**
 * vhca_wqe_take_recv() - take the next receive WQE of a QP (RQ or SRQ)
 * @qp: the QP, its rq_lock held
 * @msg: receives the WQE and its SGEs
 * @bad: set when the WQE is malformed (it is taken and must complete in
 *       error)
 *
 * Return: false when there is none.
 */
bool vhca_wqe_take_recv(struct vhca_qp *qp, struct vhca_rmsg *msg, bool *bad);

/* The work completion opcode of a send WQE's opcode (of a flushed one). */
enum ib_wc_opcode vhca_wc_opcode(u8 wr_opcode);

/**
 * vhca_comp_wqe() - complete the oldest send WQE (at sq_tail)
 * @qp: the QP, sq_lock held
 * @status: its work completion status
 *
 * The SQ slot is released before the CQE appears.
 */
void vhca_comp_wqe(struct vhca_qp *qp, u8 status);

/* vhca_send.c */

/**
 * vhca_req_run() - one requester pass of an RC QP, then the doorbell's state
 * @qp: the QP, in RTS
 *
 * Sends up to VHCA_REQ_BUDGET packets of the WQEs the doorbell shows, after
 * dropping sq_lock.  Any context: the work item (vhca_req_work()), the kick
 * system call, the doorbell's timer.  Passes never overlap; a caller that
 * finds one under way has it queue the work item when it ends.  While
 * packets the QP sent to the wire are unacknowledged, passes run on the
 * CPU that sent them (req.tx_cpu): a caller on another CPU queues the work
 * item there instead.
 */
void vhca_req_run(struct vhca_qp *qp);

/**
 * vhca_req_drain() - requester passes of an RC QP while work is left
 * @qp: the QP, in RTS
 *
 * At most VHCA_REQ_PASSES passes, rescheduling between them.  Process
 * context: the work item and the kick system call.
 *
 * Return: true when work is left after them; the caller queues the work
 * item (vhca_engine_kick()) or runs another round.
 */
bool vhca_req_drain(struct vhca_qp *qp);
void vhca_req_work(struct work_struct *work);
void vhca_req_wire_work(struct work_struct *work);

/**
 * vhca_req_rexmit_timer() - the retransmit timer's handler
 * @t: the QP's req.rexmit_timer
 *
 * Rewinds to the oldest unacknowledged WQE and queues the work item, or,
 * with no retry left, fails the QP with IB_WC_RETRY_EXC_ERR.  Nothing
 * during an RNR delay.
 */
void vhca_req_rexmit_timer(struct timer_list *t);

/**
 * vhca_req_rnr_timer() - the end of an RNR NAK's delay (softirq)
 * @t: the QP's req.rnr_timer
 *
 * Queues the work item, which sends again from the NAK's PSN.
 *
 * Return: HRTIMER_NORESTART.
 */
enum hrtimer_restart vhca_req_rnr_timer(struct hrtimer *t);

/**
 * vhca_db_expire() - end the doorbell's poll window now
 * @qp: the QP, no lock held
 * @answer: the responder took a message the process may answer
 */
void vhca_db_expire(struct vhca_qp *qp, bool answer);
enum hrtimer_restart vhca_db_timer(struct hrtimer *t);

/* vhca_req.c: everything under sq_lock but vhca_req_timeout() */

/*
 * One pass (vhca_send.c takes and drops sq_lock around it, and sends what
 * it queued on @list): true when its budget ran out with packets left;
 * a WQE that fails the QP leaves its status in @failed.
 */
bool vhca_req_pass(struct vhca_qp *qp, struct sk_buff_head *list,
		   u8 *failed);
/*
 * The requester's local ODP memory is not resident (a fault runs): no
 * pass until VHCA_ODP_RETRY_US from now, on the RNR timer (no timeout
 * meanwhile, no rnr_retry spent); a caller that had sent what needs the
 * memory goes back to it first.
 */
void vhca_req_odp_wait(struct vhca_qp *qp);
/* Go back to @psn without counting a retransmission; false: none sent. */
bool vhca_req_go_back(struct vhca_qp *qp, u32 psn);

/**
 * vhca_req_rewind() - send again from a PSN on (go-back-N)
 * @qp: the QP, sq_lock held, WQEs outstanding
 * @psn: the first PSN to send again; a READ is asked again from its
 *       request, for what its responses have not brought yet
 */
void vhca_req_rewind(struct vhca_qp *qp, u32 psn);

/* Under sq_lock: packets are in flight (sent, not acknowledged). */
bool vhca_req_busy(const struct vhca_qp *qp);
/* Under sq_lock: the PSN of the next packet the requester sends. */
u32 vhca_req_next_psn(struct vhca_qp *qp);
/* Under sq_lock: the doorbell shows WQEs not sent yet. */
bool vhca_req_pending(struct vhca_qp *qp);
/* The retransmit timeout, backed off by the timeouts in a row. */
unsigned long vhca_req_timeout(const struct vhca_qp *qp);

/* vhca_qp.c: the engine's side of the state changes */

/**
 * vhca_qp_fatal() - the QP fails
 * @qp: the QP, no lock held
 * @status: the oldest send WQE's status, or IB_WC_SUCCESS for a failure of
 *          the responder (then IB_EVENT_QP_FATAL reports it)
 *
 * The QP moves to the error state, where the rest is flushed; a QP that a
 * modify_qp reset meanwhile stays as it is, and no event is raised.
 */
void vhca_qp_fatal(struct vhca_qp *qp, u8 status);
/* Drop the requests held behind READ responses; no QP lock held. */
void vhca_resp_drop_held(struct vhca_qp *qp);

/* vhca_comp.c */

void vhca_comp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		  struct sk_buff *skb, u32 off);

/* What the completer made of a local responder's run of READ responses. */
enum vhca_rd_run {
	VHCA_RD_RUN_PLACED,	/* its bytes landed in the READ's SGEs */
	VHCA_RD_RUN_DUP,	/* they all came already: nothing to do */
	VHCA_RD_RUN_DROPPED,	/* dropped as its packets would be */
	VHCA_RD_RUN_SRC_AGAIN,	/* the responder's ODP memory not resident */
	VHCA_RD_RUN_SRC_ERR,	/* the responder's MR refused the read */
};

/**
 * vhca_comp_local_read() - a local responder's run of READ responses
 * @qp: the requester's QP, an RC QP (found under RCU, BHs off, its peer
 *      checked by the caller)
 * @pkt: the run as one response: the first's PSN, the opcode of the whole
 *       run (FIRST, MIDDLE, LAST or ONLY), all of its payload
 * @npkts: the responses (PSNs) it stands for
 * @src: where its payload comes from, the READ's MR at the responder
 *
 * Checks as for the responses (vhca_comp_rx()) and places their payload
 * into the READ's SGEs with one copy from the responder's MR.  Softirq;
 * takes sq_lock, under which it copies.
 *
 * Return: an enum vhca_rd_run.
 */
int vhca_comp_local_read(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			 u32 npkts, struct vhca_src *src);

/* vhca_resp.c */

/**
 * vhca_resp_rx() - a request packet for the responder of an RC QP
 * @qp: the QP
 * @pkt: the parsed packet
 * @opflags: its opcode's VHCA_PKT_* flags
 * @skb: the packet, its payload at @off
 * @off: where the payload starts in @skb
 *
 * Softirq.  Takes rq_lock; the ACKs and NAKs it builds are sent after the
 * lock is dropped.  A READ it accepts is answered by the QP's work item
 * (vhca_resp_run()), and requests that come while READ responses are to
 * go wait behind them (a reference to @skb is kept).
 */
void vhca_resp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		  u16 opflags, struct sk_buff *skb, u32 off);

/**
 * vhca_resp_uc_rx() - a request packet for the responder of a UC QP
 * @qp: the QP
 * @pkt: the parsed packet, a UC SEND or WRITE
 * @opflags: its opcode's VHCA_PKT_* flags
 * @skb: the packet, its payload at @off
 * @off: where the payload starts in @skb
 *
 * Softirq, takes rq_lock, sends nothing: no ACKs, NAKs or RNR NAKs on UC.
 * A message lands only whole and in order: a PSN gap, a MIDDLE or LAST
 * without its FIRST, a FIRST or ONLY before the LAST, a SEND without a
 * receive WQE, or a length, rkey, access or bounds error of the peer's
 * drops the message in progress and the packets after it up to the next
 * FIRST or ONLY, silently; a receive WQE the dropped message had taken is
 * not completed, the next message uses it.  A packet from before the
 * expected PSN is dropped alone.  The receive WQE's own errors complete it
 * in error and fail the QP.
 */
void vhca_resp_uc_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		     u16 opflags, struct sk_buff *skb, u32 off);
/**
 * vhca_resp_local() - a local requester's run of packets, placed directly
 * @qp: the responder's QP, an RC QP of the requester's peer (found under
 *      RCU, BHs off, its peer checked by the caller)
 * @pkt: the run as one packet: the first's PSN, the opcode of the whole
 *       run (FIRST, MIDDLE, LAST or ONLY), all of its payload, ackreq when
 *       one of its packets asks
 * @npkts: the packets (PSNs) it stands for
 * @src: where its payload comes from, the requester's memory
 * @src_off: the offset of its first byte in the message
 * @ack: its answer, if any: the ACK (for the run's last PSN), NAK or RNR
 *       NAK the packets would have got, with opcode IB_OPCODE_RC_ACKNOWLEDGE
 *       (else left alone), for the requester's completer (no packet)
 *
 * Checks and places as for the packets, and answers as they would be.
 *
 * Return: false when the responder does not take it (see
 * vhca_resp_handle()): the requester sends its packets.
 */
bool vhca_resp_local(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		     u32 npkts, struct vhca_src *src, u32 src_off,
		     struct vhca_pkt *ack);
bool vhca_resp_run(struct vhca_qp *qp);
/*
 * Close the responder's message in progress; a receive WQE it took and
 * did not complete stays in @msg (UC: for the next message).
 */
void vhca_rmsg_close(struct vhca_rmsg *msg);

/*
 * The PD of the responder's memory accesses: the QP's, or an XRC_TGT
 * QP's, that of the XRC SRQ of the request it executes (none outside).
 */
static inline const struct ib_pd *vhca_resp_pd(const struct vhca_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return qp->ibqp.pd;
	return qp->resp.xsrq ? qp->resp.xsrq->ibsrq.pd : NULL;
}

/*
 * vhca_resp_rd.c, for vhca_resp.c: everything under rq_lock except
 * vhca_resp_read_pass(), which takes it.  vhca_resp_read(),
 * vhca_resp_atomic_eth(), vhca_resp_atomic_write() and vhca_resp_flush()
 * take a new request
 * (0, or a NAK code); the _again variants answer a duplicate from the
 * resource that holds it, or drop it; vhca_resp_read_pass() sends one
 * bounded pass of READ responses (false: another pass runs, whose caller
 * kicks the work item after it), up to ODP memory not resident, which
 * with may_fault (process context, no lock held) it faults in and goes
 * on; vhca_resp_rd_oldest() is the busy READ
 * resource answered first (NULL: none), vhca_resp_holding() whether
 * requests must wait behind READ responses.
 */
int vhca_resp_read(struct vhca_qp *qp, const struct vhca_pkt *pkt, u32 npsn);
void vhca_resp_read_again(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  u32 npsn);
bool vhca_resp_read_pass(struct vhca_qp *qp, bool may_fault);
int vhca_resp_atomic_eth(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			 struct sk_buff_head *list);
int vhca_resp_atomic_write(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			   struct sk_buff *skb, u32 off,
			   struct sk_buff_head *list);
int vhca_resp_flush(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		    struct sk_buff_head *list);
void vhca_resp_atomic_again(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			    struct sk_buff_head *list);
struct vhca_rd_res *vhca_resp_rd_oldest(struct vhca_qp *qp);
bool vhca_resp_holding(struct vhca_qp *qp);

/* vhca_db.c */

/* Under sq_lock: set or clear VHCA_STATUS_NEEDS_WAKEUP. */
void vhca_db_wakeup_flag(struct vhca_qp *qp, bool set);

/**
 * vhca_db_idle() - the doorbell after a pass left nothing to send
 * @qp: the QP, sq_lock held
 *
 * Return: true when WQEs came while the flag was being set: the caller
 * runs another pass.
 */
bool vhca_db_idle(struct vhca_qp *qp);

/* vhca_linger.c */

/**
 * vhca_linger_rx() - a request for a QP number no QP has
 * @vdev: the device
 * @pkt: the parsed packet
 * @skb: the packet, for its origin (vhca_net_rx_from())
 *
 * A lingering QP of that number acknowledges a duplicate from its peer
 * again; anything else is ignored (counted in rx_wrong_peer when not
 * from its peer).  Under RCU, BHs off.
 *
 * Return: true when a lingering QP has that number.
 */
bool vhca_linger_rx(struct vhca_dev *vdev, const struct vhca_pkt *pkt,
		    struct sk_buff *skb);
/* Free the lingering QP of number qpn, if any (vhca_engine_dev_fini()). */
void vhca_linger_free(struct vhca_dev *vdev, unsigned long qpn);
/* The work item that frees the lingering QPs that expired. */
void vhca_linger_gc(struct work_struct *work);

#endif /* VHCA_ENGINE_H */
