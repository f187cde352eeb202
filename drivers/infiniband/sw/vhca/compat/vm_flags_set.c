// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vm_flags_set() and vm_flags_clear() (6.3) */
#include <linux/mm.h>

static void __maybe_unused probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTCOPY);
	vm_flags_clear(vma, VM_MAYWRITE);
}
