# shellcheck shell=bash
# vmlib.sh - what the qemu guests of the tests share (sourced, bash): the
# Debian kernel, fetched once and cached with the modules each guest
# loads, and the copying of dynamic binaries into an initramfs.  Used by
# tests/e2e/run.sh (a Linux NFS client) and
# tests/integration/test_powercut.sh (nlmd itself in the guest).
#
#   E2E_CACHE  the cache directory (shared by both; runs lock it)
#   E2E_KMETA  the kernel meta package (default linux-image-amd64)
#   say        a function the sourcing script defines (progress lines)
#
# The cache, $E2E_CACHE/$E2E_KMETA/: kernel (the uncompressed ELF for a
# PVH boot when the bzImage holds one, else the bzImage; "format" says
# which), version, and modules/: every module of every set below and one
# file per set, "order.SET", listing the set's modules with their
# dependencies first, one "name [parameters]" line each, as the guest's
# /init loads them.

: "${E2E_KMETA:=linux-image-amd64}"

# The module sets: what each guest needs beyond the built-in kernel.
#   nfs      the e2e client: network and NFSv3 (lockd on a fixed port)
#   powercut nlmd's guest: network, a virtio disk and ext4 on it
VM_SETS="nfs powercut"
# shellcheck disable=SC2034 # read as ${!v} in vm_fetch_kernel
VM_SET_nfs="virtio_pci virtio_net nfsv3"
# shellcheck disable=SC2034
VM_SET_powercut="virtio_pci virtio_net virtio_blk crc32c_generic ext4"
# lockd's port in the e2e guest (a module parameter).
: "${GUEST_LOCKD_PORT:=4045}"

# Module closure resolver state (vm_fetch_kernel).
declare -A KO_PATH=()
MOD_ORDER=()
MOD_SEEN=" "

mod_resolve() {
	local m=$1 d
	case $MOD_SEEN in *" $m "*) return 0 ;; esac
	MOD_SEEN="$MOD_SEEN$m "
	if [ -z "${KO_PATH[$m]:-}" ]; then
		# Built into the kernel: nothing to load.
		grep -q "/${m//_/[_-]}.ko\$" "$KBUILTIN" && return 0
		say "kernel: module $m not found"
		return 1
	fi
	for d in $(modinfo -F depends "${KO_PATH[$m]}" | tr , ' '); do
		mod_resolve "$d" || return 1
	done
	MOD_ORDER+=("$m")
}

kernel_package() {
	apt-cache depends "$E2E_KMETA" 2>/dev/null |
	    awk '/Depends: linux-image-/ { print $2; exit }'
}

# The cache is complete: the kernel and an order file for every set.
vm_cached() {
	local kc=$1 s
	[ -s "$kc/kernel" ] || return 1
	for s in $VM_SETS; do
		[ -s "$kc/modules/order.$s" ] || return 1
	done
}

# Fetch the kernel once (apt-get download of $E2E_KMETA's image package)
# into the cache; sets KDIR.  Callers serialise on $E2E_CACHE/.lock.
vm_fetch_kernel() {
	local kc=$E2E_CACHE/$E2E_KMETA tmp pkg deb vmlinuz off f m s v
	KDIR=$kc
	if vm_cached "$kc"; then
		say "kernel: cached $(cat "$kc/version")"
		return 0
	fi
	tmp=$E2E_CACHE/tmp.$$
	rm -rf "$tmp" "$kc"
	mkdir -p "$tmp/x" "$kc/modules" || return 1
	pkg=$(kernel_package)
	if [ -z "$pkg" ]; then
		# Package lists may be missing on a fresh machine or image.
		say "kernel: $E2E_KMETA unknown to apt; running apt-get update"
		apt-get update -q >"$tmp/update.log" 2>&1
		pkg=$(kernel_package)
	fi
	[ -n "$pkg" ] || { say "kernel: cannot resolve $E2E_KMETA (apt-get update?)"; return 1; }
	say "kernel: downloading $pkg"
	(cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "$pkg") \
	    >"$tmp/download.log" 2>&1 ||
	    { cat "$tmp/download.log"; return 1; }
	deb=$(ls "$tmp"/*.deb)
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" \
	    --wildcards './boot/vmlinuz-*' './lib/modules/*' || return 1
	vmlinuz=$(ls "$tmp"/x/boot/vmlinuz-*)
	# PVH boot of the uncompressed ELF saves ~3.5 s of emulated
	# decompression per boot; find the xz stream inside the bzImage.
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1)
	if [ -n "$off" ] &&
	    tail -c +$((off + 1)) "$vmlinuz" | xz -dc --single-stream >"$tmp/vmlinux" 2>/dev/null &&
	    readelf -n "$tmp/vmlinux" 2>/dev/null | grep -q 'note type: (0x00000012)\|Xen.*0x00000012\|XEN_ELFNOTE_PHYS32_ENTRY'; then
		mv "$tmp/vmlinux" "$kc/kernel"
		echo pvh >"$kc/format"
	else
		cp "$vmlinuz" "$kc/kernel"
		echo bzimage >"$kc/format"
	fi
	KBUILTIN=$(ls "$tmp"/x/lib/modules/*/modules.builtin)
	while read -r f; do
		m=$(basename "$f" .ko)
		KO_PATH[${m//-/_}]=$f
	done < <(find "$tmp/x/lib/modules" -name '*.ko')
	for s in $VM_SETS; do
		MOD_ORDER=()
		MOD_SEEN=" "
		v=VM_SET_$s
		for m in ${!v}; do
			mod_resolve "$m" || return 1
		done
		for m in "${MOD_ORDER[@]}"; do
			cp "${KO_PATH[$m]}" "$kc/modules/$m.ko"
			case $m in
			lockd) echo "$m nlm_tcpport=$GUEST_LOCKD_PORT nlm_udpport=$GUEST_LOCKD_PORT" ;;
			*) echo "$m" ;;
			esac
		done >"$kc/modules/order.$s"
		say "kernel: modules for $s: ${MOD_ORDER[*]}"
	done
	basename "$deb" .deb >"$kc/version"
	rm -rf "$tmp"
	say "kernel: $(cat "$kc/version"), $(cat "$kc/format")"
}

# vm_copy_modules ROOT SET: set SET's modules into the initramfs at ROOT,
# /usr/lib/modules/e2e/NAME.ko, and their order as /etc/e2e/modules.
vm_copy_modules() {
	local r=$1 m _
	mkdir -p "$r/usr/lib/modules/e2e" "$r/etc/e2e" || return 1
	while read -r m _; do
		[ -n "$m" ] || continue
		cp "$KDIR/modules/$m.ko" "$r/usr/lib/modules/e2e/" || return 1
	done <"$KDIR/modules/order.$2"
	cp "$KDIR/modules/order.$2" "$r/etc/e2e/modules"
}

# vm_rootfs ROOT [DIR...]: the skeleton of an initramfs at ROOT -- the
# merged-/usr layout, /dev/console and /dev/null, busybox (static) with a
# link per applet, and the directories DIR... (relative to ROOT).
vm_rootfs() {
	local r=$1 a
	shift
	mkdir -p "$r"/usr/bin "$r"/usr/sbin "$r"/usr/lib/x86_64-linux-gnu \
	    "$r"/usr/lib64 "$r"/proc "$r"/sys "$r"/dev "$r"/run "$r"/tmp \
	    "$r"/etc || return 1
	for a in "$@"; do
		mkdir -p "$r/$a" || return 1
	done
	ln -s usr/bin "$r/bin"
	ln -s usr/sbin "$r/sbin"
	ln -s usr/lib "$r/lib"
	ln -s usr/lib64 "$r/lib64"
	mknod -m 600 "$r/dev/console" c 5 1
	mknod -m 666 "$r/dev/null" c 1 3
	cp "$(command -v busybox)" "$r/usr/bin/busybox" || return 1
	for a in $("$r/usr/bin/busybox" --list); do
		[ -e "$r/usr/bin/$a" ] || ln -s busybox "$r/usr/bin/$a"
	done
}

# Copy a dynamic binary and its ldd closure into the initramfs root $1.
copy_dyn() {
	local r=$1 bin=$2 dest=$3 lib
	cp "$bin" "$r$dest/" || return 1
	for lib in $(ldd "$bin" | awk '/=> \// { print $3 } /^\t\/lib64\// { print $1 }'); do
		case $lib in
		*/ld-linux-x86-64.so.2) cp -L "$lib" "$r/usr/lib64/" ;;
		*) cp -L "$lib" "$r/usr/lib/x86_64-linux-gnu/" ;;
		esac
	done
}
