/* The coroutine context switch: saves the callee-saved registers of the
 * running context on its own stack, stores its stack pointer in *from_sp,
 * loads to_sp and restores the registers saved there. Caller-saved registers
 * need no saving because this is an ordinary function call to the compiler.
 *
 *   void hm__ctx_switch(void **from_sp, void *to_sp);
 *   hm__ctx_start: first "return address" of a new stack; calls fn(arg).
 *   void hm__call_on_stack(void *sp, void (*fn)(void *), void *arg);
 *     calls fn(arg) with the stack pointer at sp (16-aligned), then returns
 *     on the caller's own stack (hm_call_on_loop_stack).
 *
 * The layout of a fresh stack is built by ctx_make() in coro.c. */

#if defined(__x86_64__)
    .text
    .globl hm__ctx_switch
    .type hm__ctx_switch, @function
    .p2align 4
hm__ctx_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size hm__ctx_switch, .-hm__ctx_switch

    .globl hm__ctx_start
    .type hm__ctx_start, @function
    .p2align 4
hm__ctx_start:
    /* r12 = argument, r13 = entry function (placed by ctx_make). */
    movq %r12, %rdi
    callq *%r13
    ud2                 /* the entry function never returns */
    .size hm__ctx_start, .-hm__ctx_start

    .globl hm__call_on_stack
    .type hm__call_on_stack, @function
    .p2align 4
hm__call_on_stack:
    pushq %rbp
    movq %rsp, %rbp     /* rbp is callee-saved: it brings us back */
    movq %rdi, %rsp     /* 16-aligned: the call leaves rsp % 16 == 8 in fn */
    movq %rdx, %rdi
    callq *%rsi
    movq %rbp, %rsp
    popq %rbp
    ret
    .size hm__call_on_stack, .-hm__call_on_stack

#elif defined(__aarch64__)
    .text
    .globl hm__ctx_switch
    .type hm__ctx_switch, %function
    .p2align 4
hm__ctx_switch:
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x2, sp
    str x2, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .size hm__ctx_switch, .-hm__ctx_switch

    .globl hm__ctx_start
    .type hm__ctx_start, %function
    .p2align 4
hm__ctx_start:
    /* x19 = argument, x20 = entry function (placed by ctx_make). */
    mov x0, x19
    blr x20
    brk #0
    .size hm__ctx_start, .-hm__ctx_start

    .globl hm__call_on_stack
    .type hm__call_on_stack, %function
    .p2align 4
hm__call_on_stack:
    stp x29, x30, [sp, #-16]!
    mov x29, sp         /* x29 is callee-saved: it brings us back */
    mov sp, x0
    mov x0, x2
    blr x1
    mov sp, x29
    ldp x29, x30, [sp], #16
    ret
    .size hm__call_on_stack, .-hm__call_on_stack
#else
#error "hammer's coroutine switch supports x86-64 and aarch64"
#endif

    .section .note.GNU-stack,"",%progbits
