/* SPDX-License-Identifier: MIT */
/*
 * isa.h - the eBPF instruction set (RFC 9669) as data.
 *
 * ISA_OPCODES() is the one list of every opcode byte gpuext accepts.  The
 * decoder, the verifier's opcode whitelist, the interpreter's dispatch table,
 * the x86-64 JIT, the PTX translator, the assembler and the disassembler are
 * all driven from it, so a new instruction is added here once.
 *
 * Some instructions share an opcode byte and are told apart by another field
 * (RFC 9669 section 3):
 *   DIV/MOD  off = 1 makes them signed (sdiv, smod)
 *   MOV      off = 8/16/32 makes it a sign-extending move (movsx)
 *   END      imm = 16/32/64 is the width; ALU64|END is the unconditional bswap
 *   ATOMIC   imm selects the operation (ISA_ATOMIC_OPS)
 *   CALL     src = 0 helper id, src = 1 local call (pc-relative), src = 2 kfunc
 *   LD_IMM64 src selects a pseudo source (map, map value, ...)
 * isa_decode() resolves these and rejects every reserved encoding.
 */
#ifndef GPUEXT_BPF_ISA_H
#define GPUEXT_BPF_ISA_H

#include <stddef.h>
#include <stdint.h>

/* One 8-byte instruction slot, little-endian layout as in the ELF file. */
struct isa_insn {
	uint8_t code;
	uint8_t dst : 4;
	uint8_t src : 4;
	int16_t off;
	int32_t imm;
};

_Static_assert(sizeof(struct isa_insn) == 8, "isa_insn must be 8 bytes");

enum {
	ISA_NR_REGS = 11,          /* r0..r10 */
	ISA_REG_FP = 10,           /* read-only frame pointer */
	ISA_STACK_SIZE = 512,      /* bytes per frame */
	ISA_MAX_CALL_DEPTH = 8,    /* frames, the outermost included */
	ISA_MAX_HELPER_ARGS = 5,
};

/* Instruction classes: the low 3 bits of the opcode. */
#define ISA_CLASS(code) ((code) & 0x07)
enum isa_class {
	ISA_LD = 0x00,
	ISA_LDX = 0x01,
	ISA_ST = 0x02,
	ISA_STX = 0x03,
	ISA_ALU = 0x04,   /* 32-bit arithmetic */
	ISA_JMP = 0x05,   /* 64-bit compares, call, exit */
	ISA_JMP32 = 0x06, /* 32-bit compares */
	ISA_ALU64 = 0x07,
};

/* Arithmetic and jump instructions: op (high 4 bits) | source (bit 3). */
#define ISA_OP(code) ((code) & 0xf0)
#define ISA_SRC(code) ((code) & 0x08)
enum { ISA_K = 0x00, ISA_X = 0x08 };

/* X(NAME, value, mnemonic) */
#define ISA_ALU_OPS(X)                                                         \
	X(ADD, 0x00, "add")                                                    \
	X(SUB, 0x10, "sub")                                                    \
	X(MUL, 0x20, "mul")                                                    \
	X(DIV, 0x30, "div")                                                    \
	X(OR, 0x40, "or")                                                      \
	X(AND, 0x50, "and")                                                    \
	X(LSH, 0x60, "lsh")                                                    \
	X(RSH, 0x70, "rsh")                                                    \
	X(NEG, 0x80, "neg")                                                    \
	X(MOD, 0x90, "mod")                                                    \
	X(XOR, 0xa0, "xor")                                                    \
	X(MOV, 0xb0, "mov")                                                    \
	X(ARSH, 0xc0, "arsh")                                                  \
	X(END, 0xd0, "end")

#define ISA_JMP_OPS(X)                                                         \
	X(JA, 0x00, "ja")                                                      \
	X(JEQ, 0x10, "jeq")                                                    \
	X(JGT, 0x20, "jgt")                                                    \
	X(JGE, 0x30, "jge")                                                    \
	X(JSET, 0x40, "jset")                                                  \
	X(JNE, 0x50, "jne")                                                    \
	X(JSGT, 0x60, "jsgt")                                                  \
	X(JSGE, 0x70, "jsge")                                                  \
	X(CALL, 0x80, "call")                                                  \
	X(EXIT, 0x90, "exit")                                                  \
	X(JLT, 0xa0, "jlt")                                                    \
	X(JLE, 0xb0, "jle")                                                    \
	X(JSLT, 0xc0, "jslt")                                                  \
	X(JSLE, 0xd0, "jsle")

#define ISA_ENUM_ALU(name, val, mn) ISA_ALU_##name = val,
#define ISA_ENUM_JMP(name, val, mn) ISA_JMP_##name = val,
enum isa_alu_op { ISA_ALU_OPS(ISA_ENUM_ALU) };
enum isa_jmp_op { ISA_JMP_OPS(ISA_ENUM_JMP) };
#undef ISA_ENUM_ALU
#undef ISA_ENUM_JMP

/* Loads and stores: mode (high 3 bits) | size (bits 3-4) | class. */
#define ISA_MODE(code) ((code) & 0xe0)
#define ISA_SIZE(code) ((code) & 0x18)
enum isa_mode {
	ISA_IMM = 0x00,    /* LD: 64-bit immediate (two slots) */
	ISA_ABS = 0x20,    /* legacy packet access: not supported */
	ISA_IND = 0x40,    /* legacy packet access: not supported */
	ISA_MEM = 0x60,
	ISA_MEMSX = 0x80,  /* LDX: sign-extending load */
	ISA_ATOMIC = 0xc0, /* STX: atomic read-modify-write */
};
enum isa_size { ISA_W = 0x00, ISA_H = 0x08, ISA_B = 0x10, ISA_DW = 0x18 };

/* Bytes accessed by a load/store opcode. */
static inline unsigned isa_size_bytes(uint8_t code)
{
	static const unsigned char bytes[4] = {4, 2, 1, 8};
	return bytes[ISA_SIZE(code) >> 3];
}

/* Atomic operations (imm of an STX|ATOMIC instruction). */
enum { ISA_FETCH = 0x01 };
#define ISA_ATOMIC_OPS(X)                                                      \
	X(ADD, 0x00, "add")                                                    \
	X(OR, 0x40, "or")                                                      \
	X(AND, 0x50, "and")                                                    \
	X(XOR, 0xa0, "xor")                                                    \
	X(XCHG, 0xe0 | ISA_FETCH, "xchg")                                      \
	X(CMPXCHG, 0xf0 | ISA_FETCH, "cmpxchg")
#define ISA_ENUM_ATOMIC(name, val, mn) ISA_ATOMIC_##name = val,
enum isa_atomic_op { ISA_ATOMIC_OPS(ISA_ENUM_ATOMIC) };
#undef ISA_ENUM_ATOMIC

/* src field of a CALL instruction. */
enum { ISA_CALL_HELPER = 0, ISA_CALL_LOCAL = 1, ISA_CALL_KFUNC = 2 };

/*
 * src field of LD_IMM64.  Same numbers as Linux (BPF_PSEUDO_*), which is what
 * clang and the loader produce.  Until a backend resolves them, imm holds the
 * index of a map in the program's object.
 */
enum {
	ISA_PSEUDO_NONE = 0,
	ISA_PSEUDO_MAP_FD = 1,    /* imm = map index: the map itself */
	ISA_PSEUDO_MAP_VALUE = 2, /* imm = map index, next imm = offset in value 0 */
};

/*
 * Every opcode byte gpuext accepts: X(NAME, code).  NAME is what the
 * interpreter's labels and the JIT's cases are called after.
 */
#define ISA_OPCODES(X)                                                         \
	/* 32-bit ALU */                                                       \
	X(ALU32_ADD_K, 0x04) X(ALU32_ADD_X, 0x0c)                              \
	X(ALU32_SUB_K, 0x14) X(ALU32_SUB_X, 0x1c)                              \
	X(ALU32_MUL_K, 0x24) X(ALU32_MUL_X, 0x2c)                              \
	X(ALU32_DIV_K, 0x34) X(ALU32_DIV_X, 0x3c)                              \
	X(ALU32_OR_K, 0x44) X(ALU32_OR_X, 0x4c)                                \
	X(ALU32_AND_K, 0x54) X(ALU32_AND_X, 0x5c)                              \
	X(ALU32_LSH_K, 0x64) X(ALU32_LSH_X, 0x6c)                              \
	X(ALU32_RSH_K, 0x74) X(ALU32_RSH_X, 0x7c)                              \
	X(ALU32_NEG, 0x84)                                                     \
	X(ALU32_MOD_K, 0x94) X(ALU32_MOD_X, 0x9c)                              \
	X(ALU32_XOR_K, 0xa4) X(ALU32_XOR_X, 0xac)                              \
	X(ALU32_MOV_K, 0xb4) X(ALU32_MOV_X, 0xbc)                              \
	X(ALU32_ARSH_K, 0xc4) X(ALU32_ARSH_X, 0xcc)                            \
	X(ALU32_TO_LE, 0xd4) X(ALU32_TO_BE, 0xdc)                              \
	/* 64-bit ALU */                                                       \
	X(ALU64_ADD_K, 0x07) X(ALU64_ADD_X, 0x0f)                              \
	X(ALU64_SUB_K, 0x17) X(ALU64_SUB_X, 0x1f)                              \
	X(ALU64_MUL_K, 0x27) X(ALU64_MUL_X, 0x2f)                              \
	X(ALU64_DIV_K, 0x37) X(ALU64_DIV_X, 0x3f)                              \
	X(ALU64_OR_K, 0x47) X(ALU64_OR_X, 0x4f)                                \
	X(ALU64_AND_K, 0x57) X(ALU64_AND_X, 0x5f)                              \
	X(ALU64_LSH_K, 0x67) X(ALU64_LSH_X, 0x6f)                              \
	X(ALU64_RSH_K, 0x77) X(ALU64_RSH_X, 0x7f)                              \
	X(ALU64_NEG, 0x87)                                                     \
	X(ALU64_MOD_K, 0x97) X(ALU64_MOD_X, 0x9f)                              \
	X(ALU64_XOR_K, 0xa7) X(ALU64_XOR_X, 0xaf)                              \
	X(ALU64_MOV_K, 0xb7) X(ALU64_MOV_X, 0xbf)                              \
	X(ALU64_ARSH_K, 0xc7) X(ALU64_ARSH_X, 0xcf)                            \
	X(ALU64_BSWAP, 0xd7)                                                   \
	/* 64-bit jumps, call, exit */                                         \
	X(JMP_JA, 0x05)                                                        \
	X(JMP_JEQ_K, 0x15) X(JMP_JEQ_X, 0x1d)                                  \
	X(JMP_JGT_K, 0x25) X(JMP_JGT_X, 0x2d)                                  \
	X(JMP_JGE_K, 0x35) X(JMP_JGE_X, 0x3d)                                  \
	X(JMP_JSET_K, 0x45) X(JMP_JSET_X, 0x4d)                                \
	X(JMP_JNE_K, 0x55) X(JMP_JNE_X, 0x5d)                                  \
	X(JMP_JSGT_K, 0x65) X(JMP_JSGT_X, 0x6d)                                \
	X(JMP_JSGE_K, 0x75) X(JMP_JSGE_X, 0x7d)                                \
	X(JMP_CALL, 0x85)                                                      \
	X(JMP_CALLX, 0x8d)                                                     \
	X(JMP_EXIT, 0x95)                                                      \
	X(JMP_JLT_K, 0xa5) X(JMP_JLT_X, 0xad)                                  \
	X(JMP_JLE_K, 0xb5) X(JMP_JLE_X, 0xbd)                                  \
	X(JMP_JSLT_K, 0xc5) X(JMP_JSLT_X, 0xcd)                                \
	X(JMP_JSLE_K, 0xd5) X(JMP_JSLE_X, 0xdd)                                \
	/* 32-bit compares */                                                  \
	X(JMP32_JA, 0x06)                                                      \
	X(JMP32_JEQ_K, 0x16) X(JMP32_JEQ_X, 0x1e)                              \
	X(JMP32_JGT_K, 0x26) X(JMP32_JGT_X, 0x2e)                              \
	X(JMP32_JGE_K, 0x36) X(JMP32_JGE_X, 0x3e)                              \
	X(JMP32_JSET_K, 0x46) X(JMP32_JSET_X, 0x4e)                            \
	X(JMP32_JNE_K, 0x56) X(JMP32_JNE_X, 0x5e)                              \
	X(JMP32_JSGT_K, 0x66) X(JMP32_JSGT_X, 0x6e)                            \
	X(JMP32_JSGE_K, 0x76) X(JMP32_JSGE_X, 0x7e)                            \
	X(JMP32_JLT_K, 0xa6) X(JMP32_JLT_X, 0xae)                              \
	X(JMP32_JLE_K, 0xb6) X(JMP32_JLE_X, 0xbe)                              \
	X(JMP32_JSLT_K, 0xc6) X(JMP32_JSLT_X, 0xce)                            \
	X(JMP32_JSLE_K, 0xd6) X(JMP32_JSLE_X, 0xde)                            \
	/* loads and stores */                                                 \
	X(LD_IMM64, 0x18)                                                      \
	X(LDX_W, 0x61) X(LDX_H, 0x69) X(LDX_B, 0x71) X(LDX_DW, 0x79)           \
	X(LDXSX_W, 0x81) X(LDXSX_H, 0x89) X(LDXSX_B, 0x91)                     \
	X(ST_W, 0x62) X(ST_H, 0x6a) X(ST_B, 0x72) X(ST_DW, 0x7a)               \
	X(STX_W, 0x63) X(STX_H, 0x6b) X(STX_B, 0x73) X(STX_DW, 0x7b)           \
	X(ATOMIC_W, 0xc3) X(ATOMIC_DW, 0xdb)

#define ISA_ENUM_OPCODE(name, code) ISA_OPC_##name = code,
enum isa_opcode { ISA_OPCODES(ISA_ENUM_OPCODE) };
#undef ISA_ENUM_OPCODE

/* Error from isa_decode(): which rule an instruction breaks. */
struct isa_error {
	size_t index;      /* instruction slot */
	char msg[128];     /* "unknown opcode 0x8e", "reserved field src=3 must be 0" */
};

/*
 * Check that insns[0..cnt) is well-formed bytecode: every opcode in
 * ISA_OPCODES, every reserved field zero, registers in range, r10 never
 * written, LD_IMM64 followed by its second slot, jump and call targets
 * inside the program and never into the middle of LD_IMM64.  This is pure
 * syntax; safety is the verifier's job.  Returns 0, or -EINVAL with *err
 * filled in.  callx is accepted only when allow_callx is set.
 */
int isa_decode(const struct isa_insn *insns, size_t cnt, int allow_callx,
	       struct isa_error *err);

/* Mnemonic of an opcode byte ("add32", "ldxdw", "jsle"), NULL if invalid. */
const char *isa_opcode_name(uint8_t code);

/* Is this opcode byte in ISA_OPCODES? */
int isa_opcode_valid(uint8_t code);

#endif /* GPUEXT_BPF_ISA_H */
