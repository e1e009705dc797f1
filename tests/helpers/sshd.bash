# shellcheck shell=bash
# A private sshd on 127.0.0.1 for the README's ssh and `parallel --sshlogin`
# workflows: its own host key, client key, config and port, under $1.
# sshd_start DIR sets SSH_WRAP (a `ssh` stand-in with the right options)
# and SSH_LOGIN (user@127.0.0.1); DIR/bin/ssh is `ssh` with the hosts
# target, host1 and host2 at this sshd (put DIR/bin first in PATH), whose
# sessions find mt's programs in PATH and use the build-id cache
# DIR/cache; sshd_stop DIR stops it.

sshd_start() {
	local d=$1 port
	mkdir -p "$d" /run/sshd 2>/dev/null || mkdir -p "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$d/client_key" || return 1
	cp "$d/client_key.pub" "$d/authorized_keys"
	chmod 600 "$d/authorized_keys"
	for port in 22221 22222 22223 22224 22225 22226 22227 22228; do
		cat > "$d/sshd_config" <<EOC
Port $port
ListenAddress 127.0.0.1
HostKey $d/host_key
AuthorizedKeysFile $d/authorized_keys
PidFile $d/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv MT_*
Subsystem sftp internal-sftp
SetEnv PATH=${MT_BUILD:-/nonexistent}/bin:/usr/local/bin:/usr/bin:/bin MT_CACHE_DIR=$d/cache
EOC
		# -D: stay in the foreground (daemon() fails in some sandboxes).
		"$(command -v sshd || echo /usr/sbin/sshd)" -D -f "$d/sshd_config" \
		    -E "$d/sshd.log" </dev/null &
		echo $! > "$d/sshd.pid"
		cat > "$d/ssh" <<EOC
#!/bin/sh
exec ssh -F /dev/null -p $port -i $d/client_key -o BatchMode=yes \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR "\$@"
EOC
		chmod +x "$d/ssh"
		# The README's host names (target, host1, host2) for commands
		# run as written: $d/bin first in PATH gives ssh, scp and
		# parallel this sshd.
		mkdir -p "$d/bin"
		cat > "$d/ssh_config" <<EOC
Host target host1 host2
	HostName 127.0.0.1
	Port $port
	User $(id -un)
	IdentityFile $d/client_key
	BatchMode yes
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	LogLevel ERROR
EOC
		printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' \
		    "$d/ssh_config" > "$d/bin/ssh"
		chmod +x "$d/bin/ssh"
		SSH_WRAP="$d/ssh"
		SSH_LOGIN="$(id -un)@127.0.0.1"
		# Wait until it answers, as long as it runs (up to 30 s on a
		# loaded box); one that exits (the port taken) makes way for
		# the next port.
		local i spid
		spid=$(cat "$d/sshd.pid")
		for i in $(seq 1 100); do
			"$SSH_WRAP" "$SSH_LOGIN" true 2>/dev/null && return 0
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.3
		done
		sshd_stop "$d"
	done
	return 1
}

sshd_stop() {
	# (gone already when its port was taken: not an error)
	if [ -f "$1/sshd.pid" ]; then
		kill "$(cat "$1/sshd.pid")" 2>/dev/null || true
	fi
	rm -f "$1/sshd.pid"
	return 0
}
