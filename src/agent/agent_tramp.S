/* SPDX-License-Identifier: MIT */
/*
 * agent_tramp.S - the signature-free trampolines of the API probes
 * (apiprobe.h says what they do; agent_apiprobe.c holds the C halves).
 *
 * apiprobe_stubs: APIPROBE_MAX_SITES stubs, 16 bytes apart, stub i loads
 * its site index into r11 (a scratch register no call passes arguments in)
 * and jumps to the common part.  Preassembled, so no code is generated at
 * run time.
 *
 * Common part: saves every general register into a struct pt_regs in the
 * kernel's layout (offsets below, checked by static asserts in
 * agent_apiprobe.c), sp = the stack pointer at function entry (it points at
 * the return address, as for a kernel uprobe), xmm0-7 (float arguments)
 * and rax (al counts vector registers of a varargs call); calls
 * apiprobe_enter(index, regs), which puts the real function in ip (the
 * programs see it there), runs the entry programs, may swap the
 * return address, and returns the real function; restores everything and
 * jumps to it: the real function sees exactly the caller's registers and
 * stack.
 *
 * apiprobe_ret_stub: where a return-probed function returns to; keeps
 * rax/rdx/xmm0/xmm1 (the return registers), calls apiprobe_leave(saved,
 * sp), which runs the return programs and gives back the original return
 * address, and returns there.  movdqu everywhere: no alignment is assumed
 * of a caller's stack.
 */
#define PT_R15 0
#define PT_R14 8
#define PT_R13 16
#define PT_R12 24
#define PT_BP 32
#define PT_BX 40
#define PT_R11 48
#define PT_R10 56
#define PT_R9 64
#define PT_R8 72
#define PT_AX 80
#define PT_CX 88
#define PT_DX 96
#define PT_SI 104
#define PT_DI 112
#define PT_ORIG_AX 120
#define PT_IP 128
#define PT_CS 136
#define PT_FLAGS 144
#define PT_SP 152
#define PT_SS 160
#define PT_SIZE 168
#define XMM_SAVE 176                  /* 16-byte aligned after pt_regs */
#define ENTER_FRAME (XMM_SAVE + 8 * 16) /* 304: keeps rsp 16-byte aligned */

	.text

	.globl apiprobe_stubs
	.hidden apiprobe_stubs
	.balign 16
apiprobe_stubs:
	.set site, 0
	.rept 1024                    /* APIPROBE_MAX_SITES */
	.balign 16
	movl $site, %r11d
	jmp apiprobe_tramp_common
	.set site, site + 1
	.endr

	.type apiprobe_tramp_common, @function
	.balign 16
apiprobe_tramp_common:
	pushq %rbp                    /* rsp was 8 mod 16 at entry */
	movq %rsp, %rbp
	subq $ENTER_FRAME, %rsp
	andq $-16, %rsp               /* in case the caller was misaligned */
	movq %rax, PT_AX(%rsp)
	movq 0(%rbp), %rax            /* the caller's rbp */
	movq %rax, PT_BP(%rsp)
	leaq 8(%rbp), %rax            /* sp at entry: the return address */
	movq %rax, PT_SP(%rsp)
	movq %r15, PT_R15(%rsp)
	movq %r14, PT_R14(%rsp)
	movq %r13, PT_R13(%rsp)
	movq %r12, PT_R12(%rsp)
	movq %rbx, PT_BX(%rsp)
	movq %r11, PT_R11(%rsp)
	movq %r10, PT_R10(%rsp)
	movq %r9, PT_R9(%rsp)
	movq %r8, PT_R8(%rsp)
	movq %rcx, PT_CX(%rsp)
	movq %rdx, PT_DX(%rsp)
	movq %rsi, PT_SI(%rsp)
	movq %rdi, PT_DI(%rsp)
	movq $-1, PT_ORIG_AX(%rsp)
	movq $0x33, PT_CS(%rsp)       /* user code segment, as a uprobe sees it */
	movq $0, PT_FLAGS(%rsp)
	movq $0x2b, PT_SS(%rsp)
	movdqu %xmm0, XMM_SAVE + 0 * 16(%rsp)
	movdqu %xmm1, XMM_SAVE + 1 * 16(%rsp)
	movdqu %xmm2, XMM_SAVE + 2 * 16(%rsp)
	movdqu %xmm3, XMM_SAVE + 3 * 16(%rsp)
	movdqu %xmm4, XMM_SAVE + 4 * 16(%rsp)
	movdqu %xmm5, XMM_SAVE + 5 * 16(%rsp)
	movdqu %xmm6, XMM_SAVE + 6 * 16(%rsp)
	movdqu %xmm7, XMM_SAVE + 7 * 16(%rsp)
	movl %r11d, %edi
	movq %rsp, %rsi
	call apiprobe_enter
	movq %rax, %r11               /* the real function */
	movdqu XMM_SAVE + 0 * 16(%rsp), %xmm0
	movdqu XMM_SAVE + 1 * 16(%rsp), %xmm1
	movdqu XMM_SAVE + 2 * 16(%rsp), %xmm2
	movdqu XMM_SAVE + 3 * 16(%rsp), %xmm3
	movdqu XMM_SAVE + 4 * 16(%rsp), %xmm4
	movdqu XMM_SAVE + 5 * 16(%rsp), %xmm5
	movdqu XMM_SAVE + 6 * 16(%rsp), %xmm6
	movdqu XMM_SAVE + 7 * 16(%rsp), %xmm7
	movq PT_DI(%rsp), %rdi
	movq PT_SI(%rsp), %rsi
	movq PT_DX(%rsp), %rdx
	movq PT_CX(%rsp), %rcx
	movq PT_R8(%rsp), %r8
	movq PT_R9(%rsp), %r9
	movq PT_R10(%rsp), %r10
	movq PT_AX(%rsp), %rax
	leave
	jmp *%r11
	.size apiprobe_tramp_common, . - apiprobe_tramp_common

#define RET_AX 0
#define RET_DX 8
#define RET_XMM0 16
#define RET_XMM1 32
#define RET_FRAME 48

	.globl apiprobe_ret_stub
	.hidden apiprobe_ret_stub
	.type apiprobe_ret_stub, @function
	.balign 16
apiprobe_ret_stub:
	subq $8, %rsp                 /* slot for the original return address */
	pushq %rbp
	movq %rsp, %rbp
	subq $RET_FRAME, %rsp
	movq %rax, RET_AX(%rsp)
	movq %rdx, RET_DX(%rsp)
	movdqu %xmm0, RET_XMM0(%rsp)
	movdqu %xmm1, RET_XMM1(%rsp)
	andq $-16, %rsp               /* the caller's alignment is not ours to trust */
	movq %rbp, %rdi
	subq $RET_FRAME, %rdi         /* the saved return registers */
	leaq 16(%rbp), %rsi           /* sp after the return */
	call apiprobe_leave
	movq %rax, 8(%rbp)
	movq -RET_FRAME + RET_AX(%rbp), %rax
	movq -RET_FRAME + RET_DX(%rbp), %rdx
	movdqu -RET_FRAME + RET_XMM0(%rbp), %xmm0
	movdqu -RET_FRAME + RET_XMM1(%rbp), %xmm1
	leave
	ret
	.size apiprobe_ret_stub, . - apiprobe_ret_stub

	.section .note.GNU-stack, "", @progbits
