try:
    from installer import cli
except KeyboardInterrupt:  # Ctrl-C while the modules load: stopped, without a traceback
    raise SystemExit(130) from None

raise SystemExit(cli.main())
