from readmit.cli import main

if __name__ == "__main__":  # not when a spawned process imports it (serve --workers)
    main()
